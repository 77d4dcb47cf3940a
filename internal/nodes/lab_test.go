package nodes

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// labHost adds to the lab seam a WriteFile that is a plain compare-and-write.
type labHost struct {
	transporttest.LabHost
}

func (h labHost) WriteFile(ctx context.Context, f transport.File) (bool, error) {
	script := fmt.Sprintf(`p=%s; t=$(mktemp "$p.XXXXXX"); cat > "$t"
if cmp -s "$t" "$p"; then rm -f "$t"; echo unchanged; else chmod %o "$t"; mv -f "$t" "$p"; echo changed; fi`,
		transport.Quote(f.Path), f.Mode.Perm())
	res, err := h.Sudo(ctx, script, f.Content)
	return strings.TrimSpace(string(res.Stdout)) == "changed", err
}

func TestLabGather(t *testing.T) {
	l := lab.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, h := range l.Hosts[:2] {
		t.Run(h.Name, func(t *testing.T) {
			f, err := Gather(ctx, labHost{transporttest.LabHost{Lab: l, Host: h.Name}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", f)
			if err := CheckHostname(h.Name, f); err != nil {
				t.Error(err)
			}
			if f.OSID != "debian" || f.OSVersionID != "13" || f.Kernel == "" {
				t.Errorf("OS facts: %+v", f)
			}
			if f.FactsSource != SourceSlurmd || !strings.HasPrefix(f.SlurmdVersion, "24.11.") || f.CPUs < 1 || f.RealMemoryMiB < 1 {
				t.Errorf("hardware facts: %+v", f)
			}
			wantGPUs := 0
			if h.Role == "gpu" {
				wantGPUs = 4
			}
			if f.GPUCount != wantGPUs {
				t.Errorf("GPUCount = %d, want %d", f.GPUCount, wantGPUs)
			}
			if !f.TimeSynchronized && f.TimeSyncDetail == "" {
				t.Error("time not synchronised and no reason given")
			}
			if len(f.Warnings) != 0 {
				t.Errorf("warnings: %q", f.Warnings)
			}
			if err := CheckHostname("gpu99", f); err == nil {
				t.Error("CheckHostname accepted a wrong name")
			}
		})
	}
}

// The drop-in on a real sshd: refused when it would lock admin out, written,
// validated and reloaded, reported by Gather, and removed.
func TestLabAllowGroups(t *testing.T) {
	l := lab.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const node = "gpu02"
	h := labHost{transporttest.LabHost{Lab: l, Host: node}}
	t.Cleanup(func() {
		script := "rm -f " + AllowGroupsPath + "; systemctl reload ssh"
		if _, _, err := l.Exec(context.Background(), node, script); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})

	if _, err := ApplyAllowGroups(ctx, h, l.AdminUser, []string{"users"}); err == nil || !strings.Contains(err.Error(), "locked out") {
		t.Fatalf("want a refusal, got %v", err)
	}
	if _, _, err := l.Exec(ctx, node, "test ! -e "+AllowGroupsPath); err != nil {
		t.Fatal("the refused apply wrote the file")
	}

	changed, err := ApplyAllowGroups(ctx, h, l.AdminUser, []string{"sudo"})
	if err != nil || !changed {
		t.Fatalf("ApplyAllowGroups() = %v, %v", changed, err)
	}
	if changed, err = ApplyAllowGroups(ctx, h, l.AdminUser, []string{"sudo"}); err != nil || changed {
		t.Fatalf("second ApplyAllowGroups() = %v, %v, want false, nil", changed, err)
	}
	f, err := Gather(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.SSHAllowGroups, []string{"sudo"}) {
		t.Errorf("Gather SSHAllowGroups = %q", f.SSHAllowGroups)
	}
	out, _, err := l.Exec(ctx, node, "sshd -T -C user=admin,host=login01,addr=10.0.0.10 | grep -i '^allowgroups'; systemctl is-active ssh")
	if err != nil || out != "allowgroups sudo\nactive\n" {
		t.Errorf("effective sshd config: %q, %v", out, err)
	}

	if removed, err := RemoveAllowGroups(ctx, h); err != nil || !removed {
		t.Fatalf("RemoveAllowGroups() = %v, %v", removed, err)
	}
	if removed, err := RemoveAllowGroups(ctx, h); err != nil || removed {
		t.Fatalf("RemoveAllowGroups() again = %v, %v, want false, nil", removed, err)
	}
}
