package beegfs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// labUnit installs a Type=simple unit running script on host for the test.
func labUnit(t *testing.T, l *lab.Lab, host, name, script string) {
	t.Helper()
	unit := "[Service]\nType=simple\nExecStart=/bin/sh -c '" + script + "'\n"
	if _, stderr, err := l.Exec(context.Background(), host, "printf '%s' \""+unit+"\" > /run/systemd/system/"+name+".service && systemctl daemon-reload"); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), host, "systemctl stop "+name+"; systemctl reset-failed "+name+"; rm -f /run/systemd/system/"+name+".service; systemctl daemon-reload")
	})
}

// On a real systemd, a Type=simple daemon's own lines of this run decide: its registration
// line confirms the start, its "Error:" line is the refusal after systemctl start succeeded.
// The provider's quick restarts are never refused by systemd's start limit.
func TestLabStartAndConfirmServer(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 2*time.Minute)
	const host = "gpu02"
	ex := transporttest.LabHost{Lab: l, Host: host}

	labUnit(t, l, host, "gpctest-registers", `echo old; echo Node registration successful.; exec sleep infinity`)
	for i := 0; i < 7; i++ {
		if err := StartServer(ctx, ex, "gpctest-registers", true); err != nil {
			t.Fatalf("restart %d: %v", i+1, err)
		}
		if err := ConfirmServerStarted(ctx, ex, "gpctest-registers"); err != nil {
			t.Fatalf("confirm after restart %d: %v", i+1, err)
		}
	}

	labUnit(t, l, host, "gpctest-refuses", `echo; echo Error: Management host undefined >&2; exit 1`)
	if err := StartServer(ctx, ex, "gpctest-refuses", false); err != nil {
		t.Fatalf("systemctl start of a Type=simple unit: %v", err)
	}
	var started *ServerStartError
	err := ConfirmServerStarted(ctx, ex, "gpctest-refuses")
	if !errors.As(err, &started) || !started.Exited || started.Line != "Error: Management host undefined" {
		t.Fatalf("a daemon that exited: %v", err)
	}
	// Started again after its refusal, as the next apply does: a failed unit starts afresh.
	if err := StartServer(ctx, ex, "gpctest-refuses", false); err != nil {
		t.Fatalf("start after a refusal: %v", err)
	}
}
