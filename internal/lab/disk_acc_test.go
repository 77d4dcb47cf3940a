package lab

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Every host mounts its own lab disk by UUID at boot, as /etc/fstab says.
func TestLabDisksMountedByUUID(t *testing.T) {
	ctx, l := RequireWithin(t, time.Minute)
	uuids := map[string]string{}
	for _, h := range l.Hosts {
		d, err := l.Disk(h.Name)
		if err != nil {
			t.Fatal(err)
		}
		if d.Mountpoint != DiskMountpoint(h.Role) {
			t.Errorf("%s: disk at %s, want %s", h.Name, d.Mountpoint, DiskMountpoint(h.Role))
		}
		if other, dup := uuids[d.UUID]; dup {
			t.Errorf("%s and %s share filesystem UUID %s", h.Name, other, d.UUID)
		}
		uuids[d.UUID] = h.Name
		out, _, err := l.Exec(ctx, h.Name, "findmnt -n -o TARGET,FSTYPE,UUID --target "+d.Mountpoint+"; grep -v '^#' /etc/fstab")
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		want := d.Mountpoint + " ext4 " + d.UUID + " UUID=" + d.UUID + " " + d.Mountpoint + " ext4 defaults,nofail 0 2"
		if got := strings.Join(strings.Fields(out), " "); got != want {
			t.Errorf("%s: findmnt and fstab say %q, want %q", h.Name, got, want)
		}
	}
}

// The guide's array that failed to assemble: with its disk detached, a
// rebooted GPU server has nothing at /data, data.mount fails and a service
// that RequiresMountsFor=/data does not start. With the disk attached again
// and another reboot, /data is back with the same UUID and data. The
// host's PID 1 changes with each reboot and Exec follows it.
func TestLabDetachDiskAndReboot(t *testing.T) {
	ctx, l := RequireWithin(t, 5*time.Minute)
	host, disk := lastGPUDisk(t, l)
	marker := disk.Mountpoint + "/lab-disk-test"
	const unit = "lab-needs-data.service"
	mustRun(ctx, t, l, host, "echo "+disk.UUID+" > "+marker+` && mkdir -p /etc/systemd/system/`+unit+`.d && printf '[Unit]\nRequiresMountsFor=`+disk.Mountpoint+`\n' > /etc/systemd/system/`+unit+`.d/mounts.conf && printf '[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' > /etc/systemd/system/`+unit+` && systemctl daemon-reload && systemctl enable --quiet `+unit)
	t.Cleanup(func() {
		cleanup := context.Background()
		if d, err := l.Disk(host); err == nil && d.Detached {
			_ = l.AttachDisk(cleanup, host)
			_ = l.Reboot(cleanup, host)
		}
		_, _, _ = l.Exec(cleanup, host, "systemctl disable --quiet "+unit+"; rm -rf /etc/systemd/system/"+unit+"* "+marker+"; systemctl daemon-reload")
	})

	oldPID := l.Host(host).PID
	if err := l.DetachDisk(ctx, host); err != nil {
		t.Fatalf("detach: %v", err)
	}
	if err := l.Reboot(ctx, host); err != nil {
		t.Fatalf("reboot with the disk detached: %v", err)
	}
	if pid := l.Host(host).PID; pid == oldPID || !isContainerInit(pid) {
		t.Errorf("after the reboot the descriptor names PID %d (before: %d)", pid, oldPID)
	}
	out := mustRun(ctx, t, l, host, "systemctl is-failed "+disk.mountUnit()+" || true; systemctl is-active "+unit+" || true; findmnt -n -o TARGET --target "+disk.Mountpoint+"; test -e "+marker+" || echo no-marker")
	if got := strings.Fields(out); strings.Join(got, " ") != "failed inactive / no-marker" {
		t.Errorf("with the disk detached: %s, %s, mount of %s, marker = %q; want failed, inactive, / and no marker", disk.mountUnit(), unit, disk.Mountpoint, out)
	}
	journal := mustRun(ctx, t, l, host, "journalctl -b -q -o cat -u "+unit+" | grep -c 'Dependency failed' || true")
	if strings.TrimSpace(journal) == "0" {
		t.Errorf("%s did not fail on its dependency on %s", unit, disk.Mountpoint)
	}

	if err := l.AttachDisk(ctx, host); err != nil {
		t.Fatalf("attach: %v", err)
	}
	if err := l.Reboot(ctx, host); err != nil {
		t.Fatalf("reboot with the disk attached: %v", err)
	}
	reattached, err := l.Disk(host)
	if err != nil {
		t.Fatal(err)
	}
	if reattached.Detached || reattached.UUID != disk.UUID || loopBackingFile(reattached.LoopDevice) != disk.Image {
		t.Errorf("disk after attach: %+v, want %+v attached", reattached, disk)
	}
	out = mustRun(ctx, t, l, host, "findmnt -n -o TARGET,UUID --target "+marker+"; cat "+marker+"; systemctl is-active "+unit)
	if got := strings.Join(strings.Fields(out), " "); got != disk.Mountpoint+" "+disk.UUID+" "+disk.UUID+" active" {
		t.Errorf("after attach and reboot: %q; want %s mounted with UUID %s, the marker, and %s active", out, disk.Mountpoint, disk.UUID, unit)
	}
}

func mustRun(ctx context.Context, t *testing.T, l *Lab, host, script string) string {
	t.Helper()
	out, stderr, err := l.Exec(ctx, host, script)
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", host, err, out, stderr)
	}
	return out
}

// lastGPUDisk is the lab's last GPU server, the one the power and disk tests take down, and
// its disk.
func lastGPUDisk(t *testing.T, l *Lab) (string, Disk) {
	t.Helper()
	gpus := l.HostsWithRole(RoleGPU)
	host := gpus[len(gpus)-1].Name
	disk, err := l.Disk(host)
	if err != nil {
		t.Fatal(err)
	}
	return host, disk
}
