// Package unitstest answers the host's shared read of unit states, for the tests of the packages
// that read a unit through units.Read.
package unitstest

import (
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// Out is the shared read's output with unit's words, every other unit stopped and missing.
func Out(unit string, st units.State) string {
	var a, e strings.Builder
	for _, u := range units.Shared {
		if u == unit {
			a.WriteString(st.Active + "\n")
			e.WriteString(st.Enabled + "\n")
		} else {
			a.WriteString("inactive\n")
			e.WriteString("not-found\n")
		}
	}
	return "@@gpucluster active\n" + a.String() + "\n@@rc 3\n@@gpucluster enabled\n" + e.String() + "\n@@rc 0\n"
}
