package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestBootStateErr(t *testing.T) {
	cases := []struct {
		out  string
		want error
	}{
		{"systemd running\n", nil},
		{"systemd degraded\n", nil},
		{"cloud-init done\nsystemd running\n", nil},
		{"cloud-init disabled\nsystemd degraded\n", nil},
		{"systemd starting\n", ErrStillBooting},
		{"systemd initializing\n", ErrStillBooting},
		{"systemd offline\n", ErrStillBooting},
		{"systemd \n", ErrStillBooting},
		{"cloud-init running\nsystemd running\n", ErrStillBooting},
		{"cloud-init not started\nsystemd starting\n", ErrStillBooting},
		{"cloud-init error\nsystemd running\n", ErrBootFailed},
		{"systemd maintenance\n", ErrBootFailed},
		{"systemd stopping\n", ErrBootFailed},
	}
	for _, c := range cases {
		err := ParseBootState(c.out).Err()
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.out, err, c.want)
		}
	}
}

// shellRunner runs the script with this machine's sh, as Run does on a node.
type shellRunner struct{ transporttest.Shell }

func (s shellRunner) Run(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	return s.Sudo(ctx, script, stdin)
}

// stubCommand writes a command into dir that prints, on each call, the next of lines, then
// the last one for good.
func stubCommand(t *testing.T, dir, name string, lines ...string) {
	t.Helper()
	count := filepath.Join(dir, name+".calls")
	body := "#!/bin/sh\nn=$(cat " + count + " 2>/dev/null || echo 0); echo $((n + 1)) > " + count + "\ncase $n in\n"
	for i, l := range lines[:len(lines)-1] {
		body += "  " + string(rune('0'+i)) + ") echo '" + l + "';;\n"
	}
	body += "  *) echo '" + lines[len(lines)-1] + "';;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil { //nolint:gosec // G306: a test's stand-in command must be executable.
		t.Fatal(err)
	}
}

func calls(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".calls"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// The script waits for cloud-init where it is installed, then for systemd, polling each until
// the boot finished; every poll that found it booting is reported.
func TestWaitBootedPollsCloudInitThenSystemd(t *testing.T) {
	dir := t.TempDir()
	stubCommand(t, dir, "cloud-init", "status: running", "status: done")
	stubCommand(t, dir, "systemctl", "starting", "starting", "running")
	sh := shellRunner{transporttest.Shell{Rewrite: func(script string) string { return "PATH=" + dir + ":$PATH\n" + script }}}
	var progress []transport.WaitProgress
	wait := transport.NewBootWait(time.Minute, func(p transport.WaitProgress) { progress = append(progress, p) })
	wait.Backoff, wait.MaxBackoff = time.Millisecond, time.Millisecond
	if err := WaitBooted(context.Background(), sh, "gpu03", "10.0.0.13", wait); err != nil {
		t.Fatalf("WaitBooted: %v", err)
	}
	if got := calls(t, dir, "systemctl"); got != "3" {
		t.Errorf("systemctl ran %s times, want 3 (starting, starting, running)", got)
	}
	if len(progress) != 2 || progress[0].Waiting != "boot" || !strings.Contains(progress[0].Cause.Error(), `cloud-init status is "running"`) ||
		!strings.Contains(progress[1].Cause.Error(), `system state is "starting"`) {
		t.Errorf("progress %+v, want cloud-init running, then systemd starting", progress)
	}
}

// A failed boot ends the wait at once with what failed.
func TestWaitBootedStopsAtAFailedBoot(t *testing.T) {
	dir := t.TempDir()
	stubCommand(t, dir, "systemctl", "maintenance")
	sh := shellRunner{transporttest.Shell{Rewrite: func(script string) string { return "PATH=" + dir + ":$PATH\n" + script }}}
	err := WaitBooted(context.Background(), sh, "gpu03", "10.0.0.13", transport.NewBootWait(time.Minute, nil))
	if !errors.Is(err, ErrBootFailed) || !strings.Contains(err.Error(), "maintenance") {
		t.Fatalf("WaitBooted: %v, want the boot failed in maintenance", err)
	}
	if got := calls(t, dir, "systemctl"); got != "1" {
		t.Errorf("systemctl ran %s times, want 1", got)
	}
}
