package packages

import (
	"context"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units/unitstest"
)

// A shared package's version comes from the same script as a shared unit's state, so the
// host's read cache answers both with one round trip; a package nobody shares gets a read
// of its own.
func TestInstalledSharesTheHostsRead(t *testing.T) {
	const unit, pkg = "gpucluster-t.service", "gpucluster-t-pkg"
	units.Share([]string{unit}, nil)
	Share(pkg)
	shared := transporttest.Reply{Stdout: unitstest.OutWithPackages(unit, units.State{Active: "active", Enabled: "enabled"}, pkg+"\tii \t1.2-3\n", 0)}
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{shared, shared, {Stdout: "other\tii \t4.5-6\n"}}}
	ctx := context.Background()
	if _, err := units.Read(ctx, f, unit); err != nil {
		t.Fatal(err)
	}
	got, err := Installed(ctx, f, pkg)
	if err != nil || got[pkg] != "1.2-3" {
		t.Fatalf("Installed(%s) = %v, %v; want 1.2-3", pkg, got, err)
	}
	other, err := Installed(ctx, f, "other")
	if err != nil || other["other"] != "4.5-6" {
		t.Fatalf("Installed(other) = %v, %v; want 4.5-6", other, err)
	}
	s := f.Scripts()
	if s[0] != s[1] {
		t.Errorf("the shared package was not asked in the units' shared read:\n%s\n---\n%s", s[0], s[1])
	}
	if s[2] == s[0] {
		t.Error("a package nobody shares was asked in the shared read")
	}
	for i, c := range f.Calls {
		if !c.Read {
			t.Errorf("call %d was not a read", i)
		}
	}
}
