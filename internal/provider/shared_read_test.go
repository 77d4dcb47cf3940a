package provider

import (
	"slices"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// The packages that own the daemons share their units and key files with the host's one read
// of them: every node's plan reads these, so each missing from it would cost a command of its
// own on every node.
func TestSharedReadCoversEveryDaemonsUnitsAndKeys(t *testing.T) {
	got := units.SharedUnits()
	for _, u := range []string{"munge.service", "slurmd.service", beegfs.ServiceMgmtd + ".service", beegfs.ServiceMeta + ".service",
		beegfs.ServiceStorage + ".service", beegfs.ServiceClient + ".service"} {
		if !slices.Contains(got, u) {
			t.Errorf("the shared read does not cover %s: %q", u, got)
		}
	}
	for _, f := range []string{munge.KeyPath, beegfs.ConnAuthPath, beegfs.TLSCertPath} {
		if !units.SharesFile(f) {
			t.Errorf("the shared read does not cover %s", f)
		}
	}
}
