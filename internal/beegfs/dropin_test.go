package beegfs

import (
	"io/fs"
	"testing"
)

func TestRequiresMountsDropIn(t *testing.T) {
	tests := []struct {
		service, name, mountpoint string
		wantPath, wantContent     string
	}{
		{ServiceStorage, "storage", "/data",
			"/etc/systemd/system/beegfs-storage.service.d/storage.conf", "[Unit]\nRequiresMountsFor=/data\n"},
		{ServiceMeta, "meta", "/beegfs",
			"/etc/systemd/system/beegfs-meta.service.d/meta.conf", "[Unit]\nRequiresMountsFor=/beegfs\n"},
		{ServiceMgmtd, "mgmtd", "/beegfs",
			"/etc/systemd/system/beegfs-mgmtd.service.d/mgmtd.conf", "[Unit]\nRequiresMountsFor=/beegfs\n"},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			f, err := RequiresMountsDropIn(tt.service, tt.name, tt.mountpoint)
			if err != nil {
				t.Fatal(err)
			}
			if f.Path != tt.wantPath || string(f.Content) != tt.wantContent {
				t.Errorf("got %s with %q", f.Path, f.Content)
			}
			if f.Owner != "root" || f.Group != "root" || f.Mode != fs.FileMode(0o644) {
				t.Errorf("ownership %s:%s %o", f.Owner, f.Group, f.Mode)
			}
		})
	}
}

func TestRequiresMountsDropInRefuses(t *testing.T) {
	tests := []struct{ name, service, dropIn, mountpoint string }{
		{"client has no interlock drop-in", ServiceClient, "x", "/home"},
		{"unknown service", "sshd", "x", "/data"},
		{"name with a slash", ServiceStorage, "../x", "/data"},
		{"mountpoint with a blank names two", ServiceStorage, "storage", "/data /other"},
		{"relative mountpoint", ServiceStorage, "storage", "data"},
		{"line break", ServiceStorage, "storage", "/data\nExecStartPre=/bin/true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := RequiresMountsDropIn(tt.service, tt.dropIn, tt.mountpoint); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestMountsConf(t *testing.T) {
	f, err := MountsConf("/home")
	if err != nil {
		t.Fatal(err)
	}
	if f.Path != "/etc/beegfs/beegfs-mounts.conf" || string(f.Content) != "/home /etc/beegfs/beegfs-client.conf\n" {
		t.Errorf("got %s with %q", f.Path, f.Content)
	}
	if _, err := MountsConf("/home /etc/passwd"); err == nil {
		t.Error("a mountpoint with a blank was accepted")
	}
}
