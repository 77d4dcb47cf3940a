package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// Slurm's own parser on login01 accepts the guide's slurm.conf and refuses
// an unknown key, and the installed version knows everything the guide
// writes. The lab's hosts start bare, so slurmctld is installed first from the
// lab's package repository (it stays inactive without a slurm.conf); the check
// itself works in a temporary directory it removes.
func TestLabValidateSlurmConf(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 3*time.Minute)
	login := transporttest.LabHost{Lab: l, Host: "login01"}
	if _, err := packages.Ensure(ctx, login, "slurmctld"); err != nil {
		t.Fatal(err)
	}
	v, err := ReadVersion(ctx, login, "slurmctld")
	if err != nil {
		t.Fatal(err)
	}
	c, nodes, parts := guideExample()
	f := Fragments{Controller: &c, Nodes: nodes, Partitions: parts}
	if w, err := CheckVersion(v, f); err != nil || len(w) > 0 {
		t.Errorf("Slurm %s: %v %v", v, w, err)
	}
	slurmConf, _, _, err := Assemble(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateSlurmConf(ctx, login, slurmConf); err != nil {
		t.Errorf("the guide's slurm.conf: %v", err)
	}
	bad := append(append([]byte(nil), slurmConf...), "Bogus=1\n"...)
	err = ValidateSlurmConf(ctx, login, bad)
	if err == nil || !strings.Contains(err.Error(), "unrecognized key: Bogus") {
		t.Errorf("a bogus key: %v", err)
	}
}
