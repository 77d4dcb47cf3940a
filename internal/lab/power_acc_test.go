package lab

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A GPU server powered off keeps its disk and its state: after Stop, and after a poweroff from
// inside, Exec refuses (the host is off) and Start boots it with the files written before on
// its root filesystem and on /data, the same disk UUID and a new boot ID.
func TestLabStopStartKeepsDisk(t *testing.T) {
	ctx, l := RequireWithin(t, 5*time.Minute)
	host, disk := lastGPUDisk(t, l)
	rootMarker, dataMarker := "/var/lib/lab-power-test", disk.Mountpoint+"/lab-power-test"
	mustRun(ctx, t, l, host, "echo root > "+rootMarker+" && echo "+disk.UUID+" > "+dataMarker)
	t.Cleanup(func() {
		cleanup := context.Background()
		if !l.Running(host) {
			_ = l.Start(cleanup, host)
		}
		_, _, _ = l.Exec(cleanup, host, "rm -f "+rootMarker+" "+dataMarker)
	})

	for _, powerOff := range []struct {
		how string
		off func() error
	}{
		{"gpucluster-lab stop", func() error { return l.Stop(ctx, host) }},
		{"systemctl poweroff inside", func() error {
			if _, _, err := l.Exec(ctx, host, "systemctl --no-block poweroff"); err != nil {
				return err
			}
			return pollUntil(ctx, func() bool { return !l.Running(host) })
		}},
	} {
		boot := strings.TrimSpace(mustRun(ctx, t, l, host, "cat /proc/sys/kernel/random/boot_id"))
		if err := powerOff.off(); err != nil {
			t.Fatalf("%s: %v", powerOff.how, err)
		}
		if l.Running(host) {
			t.Fatalf("%s: %s still runs", powerOff.how, host)
		}
		if _, _, err := l.Exec(ctx, host, "true"); err == nil || !strings.Contains(err.Error(), "not running") {
			t.Errorf("%s: exec on the stopped host: %v, want it refused", powerOff.how, err)
		}
		if err := l.Start(ctx, host); err != nil {
			t.Fatalf("start after %s: %v", powerOff.how, err)
		}
		if err := l.Start(ctx, host); err == nil || !strings.Contains(err.Error(), "running already") {
			t.Errorf("a second start: %v, want it refused", err)
		}
		out := mustRun(ctx, t, l, host, "cat /proc/sys/kernel/random/boot_id "+rootMarker+" "+dataMarker+"; findmnt -n -o UUID --target "+dataMarker)
		got := strings.Fields(out)
		if len(got) != 4 || got[0] == boot || got[1] != "root" || got[2] != disk.UUID || got[3] != disk.UUID {
			t.Errorf("after %s and start: %q; want a new boot ID, the root marker, and the /data marker on the disk with UUID %s", powerOff.how, out, disk.UUID)
		}
	}
	if err := l.Stop(ctx, LoginHost); err == nil {
		t.Error("login01 was stopped alone")
	}
}

func pollUntil(ctx context.Context, done func() bool) error {
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	return nil
}
