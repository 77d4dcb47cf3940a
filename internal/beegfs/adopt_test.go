package beegfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// A cluster built by the guide's own commands names its drop-ins as the guide does
// (beegfs-storage.service.d/storage.conf), not as the provider does: what systemd adds up over
// every drop-in of the unit is what guards it.
func TestReadHostDropInMountsOnThisMachine(t *testing.T) {
	units := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(units, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("beegfs-storage.service.d/storage.conf", "[Unit]\nRequiresMountsFor=/data\n")
	write("beegfs-storage.service.d/zz-more.conf", "[Unit]\n  RequiresMountsFor = /scratch /data2/\n")
	write("beegfs-storage.service.d/ignored.txt", "[Unit]\nRequiresMountsFor=/not-a-drop-in\n")
	// Another target's own drop-in guards that target only.
	write("beegfs-storage.service.d/target-201.conf", "[Unit]\nRequiresMountsFor=/other-target\n")
	// An empty assignment drops what came before it, as systemd reads it.
	write("beegfs-meta.service.d/a.conf", "[Unit]\nRequiresMountsFor=/old\n")
	write("beegfs-meta.service.d/b.conf", "[Unit]\nRequiresMountsFor=\nRequiresMountsFor=/beegfs\n")
	sh := transporttest.Shell{Rewrite: func(s string) string { return strings.ReplaceAll(s, SystemdUnitDir, units) }}
	st, err := ReadHost(context.Background(), sh, HostQuery{DropInMounts: []string{ServiceStorage, ServiceMeta, ServiceMgmtd}})
	if err != nil {
		t.Fatal(err)
	}
	for unit, want := range map[string][]string{
		ServiceStorage: {"/data", "/scratch", "/data2/"},
		ServiceMeta:    {"/beegfs"},
		ServiceMgmtd:   nil,
	} {
		if got := st.RequiredMounts[unit]; !slices.Equal(got, want) {
			t.Errorf("%s requires %q, want %q", unit, got, want)
		}
	}
	if _, err := ReadHost(context.Background(), sh, HostQuery{DropInMounts: []string{"x; rm -rf /"}}); err == nil {
		t.Error("a unit name that is not one was accepted")
	}
}

func TestDropInGuards(t *testing.T) {
	own, err := StorageDropIn(101, "/data")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		own      FileState
		required []string
		want     bool
	}{
		"the provider's drop-in":                 {FileState{Exists: true, Content: own.Content}, []string{"/data"}, true},
		"the provider's drop-in changed by hand": {FileState{Exists: true, Content: []byte("[Unit]\n")}, []string{"/data"}, false},
		"the guide's storage.conf":               {FileState{}, []string{"/data"}, true},
		"written with a trailing slash":          {FileState{}, []string{"/scratch", "/data/"}, true},
		"another mountpoint only":                {FileState{}, []string{"/scratch"}, false},
		"none":                                   {FileState{}, nil, false},
	}
	for name, tt := range tests {
		if got := DropInGuards(tt.own, own, tt.required, "/data"); got != tt.want {
			t.Errorf("%s: %v, want %v", name, got, tt.want)
		}
		// The provider writes its own only where no drop-in of the admin's guards the service.
		if byHand := GuardedByHand(tt.own, tt.required, "/data"); byHand != (tt.want && !tt.own.Exists) {
			t.Errorf("%s: guarded by hand %v", name, byHand)
		}
	}
}

// The guide's storage.conf is no drift; a drop-in guarding another mountpoint is.
func TestStorageDriftAcceptsTheGuidesDropIn(t *testing.T) {
	w := StorageWant{Target: TargetIdentity{Directory: "/data/beegfs-storage", NodeNumID: 1, TargetID: 101}, Mgmtd: "10.0.0.10", Mountpoint: "/data", FsUUID: testUUID}
	for required, drift := range map[string]bool{"/data": false, "/scratch": true} {
		h := StorageHost{RequiredMounts: []string{required}}
		got := strings.Join(StorageDrift(h, w), "; ")
		if strings.Contains(got, "drop-in") != drift {
			t.Errorf("drop-in requiring %s: drift %q, want drop-in drift %v", required, got, drift)
		}
	}
}

// key.pem as openssl writes it (0600) is root's alone like the guide's chmod 400.
func TestSecretPermissions(t *testing.T) {
	for perm, ok := range map[string]bool{
		"":               true, // missing: reported elsewhere
		"root:root 400":  true,
		"root:root 600":  true,
		"root:adm 600":   true,
		"root:root 640":  false,
		"root:root 604":  false,
		"admin:root 400": false,
		"root:root":      false,
	} {
		if got := len(secretPermProblems(TLSKeyPath, perm)) == 0; got != ok {
			t.Errorf("%q: root's alone %v, want %v", perm, got, ok)
		}
	}
	m := convergedMgmtd(t)
	m.KeyPerm = "root:root 600"
	if p := MgmtdProblems(m, release(t, "8.4.0"), "/beegfs/mgmtd/mgmtd.sqlite", "/beegfs", testUUID); len(p) != 0 || len(m.LooseSecrets()) != 0 {
		t.Errorf("key.pem 0600: problems %v, loose %v", p, m.LooseSecrets())
	}
}
