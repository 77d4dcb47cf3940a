package beegfs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units/unitstest"
)

func TestPinPackage(t *testing.T) {
	const a, b = "8.4.0-0labstandin1", "8.4.0-0labstandin1+gpucluster1"
	unit := func(active string) transporttest.Reply {
		return transporttest.Reply{Stdout: unitstest.Out(ServiceMeta+".service", units.State{Active: active, Enabled: "enabled"})}
	}
	at := func(v string) transporttest.Reply {
		return transporttest.Reply{Stdout: MetaPackage + "\tii \t" + v + "\n"}
	}
	tests := []struct {
		name        string
		replies     []transporttest.Reply
		wantRestart bool
		wantInstall bool
	}{
		{"at the version: reads only", []transporttest.Reply{unit("active"), at(b)}, false, false},
		{"running: upgraded, restart asked", []transporttest.Reply{unit("active"), at(a), {}}, true, true},
		{"stopped: upgraded, no restart", []transporttest.Reply{unit("inactive"), at(a), {}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: tt.replies}
			restart, err := PinPackage(context.Background(), f, ServiceMeta, MetaPackage, b)
			if err != nil {
				t.Fatal(err)
			}
			if restart != tt.wantRestart {
				t.Errorf("restart = %v, want %v", restart, tt.wantRestart)
			}
			if len(f.Replies) != 0 {
				t.Errorf("%d scripts expected but not run", len(f.Replies))
			}
			if installed := strings.Contains(f.Calls[len(f.Calls)-1].Script, "'"+MetaPackage+"="+b+"'"); installed != tt.wantInstall {
				t.Errorf("installed %s=%s: %v, want %v", MetaPackage, b, installed, tt.wantInstall)
			}
		})
	}
}

func TestPinPackageRefusesDowngrade(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{Stdout: unitstest.Out(ServiceMeta+".service", units.State{Active: "active", Enabled: "enabled"})},
		{Stdout: MetaPackage + "\tii \t8.4.1-1\n"},
	}}
	if _, err := PinPackage(context.Background(), f, ServiceMeta, MetaPackage, "8.4.0-1"); !errors.Is(err, packages.ErrDowngrade) || len(f.Calls) != 2 {
		t.Fatalf("PinPackage = %v after %d scripts, want a downgrade refused after the reads", err, len(f.Calls))
	}
}
