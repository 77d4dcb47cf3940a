package unitstest

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// Out is the shared read's output with unit's words, every other unit stopped and missing, and
// every shared file missing.
func Out(unit string, st units.State) string { return OutWithFile(unit, st, "", units.File{}) }

// OutWithFile is Out with file's checksum, owner and mode, when f exists.
func OutWithFile(unit string, st units.State, file string, f units.File) string {
	files := "@@gpucluster files\n"
	if f.Exists {
		files += fmt.Sprintf("%s  %s\n%o %s %s %s\n", f.SHA256, file, f.Mode, f.Owner, f.Group, file)
	}
	files += "\n@@rc 0\n"
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
	return files + "@@gpucluster active\n" + a.String() + "\n@@rc 3\n@@gpucluster enabled\n" + e.String() + "\n@@rc 0\n"
}
