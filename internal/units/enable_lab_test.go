package units

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// TestLabEnableTextLeavesAnEnabledUnitAlone has gpu01 hold a unit with a SysV script beside it,
// as Debian's munge, slurmd and slurmctld packages ship theirs: EnableText enables it when it is
// disabled, and once it is enabled reloads systemd no more, where systemctl enable alone still
// does (systemd's "Reloading finished" in the journal is the reload).
func TestLabEnableTextLeavesAnEnabledUnitAlone(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 2*time.Minute)
	const unit = "gpucluster-t-sysv"
	const setup = `set -e
printf '[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n' > /etc/systemd/system/` + unit + `.service
printf '#!/bin/sh\n### BEGIN INIT INFO\n# Provides: ` + unit + `\n# Required-Start:\n# Required-Stop:\n# Default-Start: 2 3 4 5\n# Default-Stop: 0 1 6\n### END INIT INFO\nexit 0\n' > /etc/init.d/` + unit + `
chmod 755 /etc/init.d/` + unit + `
systemctl daemon-reload
`
	const cleanup = `systemctl disable --quiet ` + unit + ` 2>/dev/null
rm -f /etc/systemd/system/` + unit + `.service /etc/init.d/` + unit + `
systemctl daemon-reload
`
	t.Cleanup(func() {
		if out, _, err := l.Exec(context.Background(), "gpu01", cleanup); err != nil {
			t.Errorf("cleanup: %v\n%s", err, out)
		}
	})
	run := func(script string) string {
		t.Helper()
		out, stderr, err := l.Exec(ctx, "gpu01", script)
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", script, err, out, stderr)
		}
		return strings.TrimSpace(out)
	}
	run(setup)
	// reloads runs script and counts the systemd reloads the journal records meanwhile.
	reloads := func(script string) string {
		t.Helper()
		cursor := strings.TrimPrefix(run("journalctl -n 0 --show-cursor -o cat"), "-- cursor: ")
		run(script)
		return run(`journalctl --sync; journalctl --no-pager -o cat --after-cursor=` + "'" + cursor + "'" + ` _PID=1 | grep -c '^Reloading finished' || true`)
	}
	if got := reloads(EnableText(unit)); got == "0" {
		t.Errorf("enabling the disabled unit reloaded systemd %s times, want at least once", got)
	}
	if got := run("systemctl is-enabled " + unit); got != "enabled" {
		t.Fatalf("after EnableText the unit is %q, want enabled", got)
	}
	if got := reloads("systemctl enable --quiet " + unit); got == "0" {
		t.Fatalf("systemctl enable of the enabled unit reloaded systemd %s times: the journal does not show what this test counts", got)
	}
	if got := reloads(EnableText(unit)); got != "0" {
		t.Errorf("EnableText of the enabled unit reloaded systemd %s times, want none", got)
	}
	if got := run("systemctl is-enabled " + unit); got != "enabled" {
		t.Errorf("the unit is %q, want enabled", got)
	}
}
