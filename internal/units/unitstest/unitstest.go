package unitstest

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// Out is the shared read's output with unit's words, every other shared unit stopped and
// missing, and every shared file missing.
func Out(unit string, st units.State) string { return OutWithFile(unit, st, "", units.File{}) }

// OutWithPackages is Out with dpkg-query's answer about the shared packages (packages.Share)
// and its exit status: 1 when some package is unknown.
func OutWithPackages(unit string, st units.State, dpkg string, status int) string {
	return OutWithFile(unit, st, "", units.File{}) + transporttest.Sections(fmt.Sprintf("@@gpucluster shared-packages\n%s\n@@rc %d\n", strings.TrimSuffix(dpkg, "\n"), status))
}

// OutWithFile is Out with file's checksum, owner and mode, when f exists.
func OutWithFile(unit string, st units.State, file string, f units.File) string {
	files := "@@gpucluster files\n"
	if f.Exists {
		files += fmt.Sprintf("%s  %s\n%o %s %s %s\n", f.SHA256, file, f.Mode, f.Owner, f.Group, file)
	}
	files += "\n@@rc 0\n"
	var absent strings.Builder
	for _, u := range units.SharedUnits() {
		if u != unit {
			absent.WriteString(u + "\n")
		}
	}
	loaded := ""
	if st.Active != "inactive" {
		loaded = fmt.Sprintf("%s loaded %s running Some daemon\n", unit, st.Active)
	}
	return transporttest.Sections(files + "@@gpucluster absent\n" + absent.String() + "\n@@rc 0\n@@gpucluster loaded\n" + loaded + "\n@@rc 0\n" +
		"@@gpucluster linked\n\n@@rc 0\n@@gpucluster enabled\n" + st.Enabled + "\n\n@@rc 0\n")
}
