package nodes

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
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
	ctx, l := lab.RequireWithin(t, time.Minute)
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
			// Read from /proc/sys/kernel, they are what the host's own uname prints.
			uname, _, err := l.Exec(ctx, h.Name, "uname -r -n")
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Fields(uname); len(want) != 2 || f.Hostname != want[0] || f.Kernel != want[1] {
				t.Errorf("hostname %q and kernel %q, the host's uname -n -r says %q", f.Hostname, f.Kernel, uname)
			}
			// Hosts start bare; earlier tests may have installed slurmd since.
			wantSource, wantVersion := SourceLscpu, regexp.MustCompile(`^$`)
			if _, _, err := l.Exec(ctx, h.Name, "command -v slurmd"); err == nil {
				wantSource, wantVersion = SourceSlurmd, regexp.MustCompile(`^24\.11\.`)
			}
			if f.FactsSource != wantSource || !wantVersion.MatchString(f.SlurmdVersion) || f.CPUs < 1 || f.RealMemoryMiB < 1 {
				t.Errorf("hardware facts (want source %q, slurmd version %s): %+v", wantSource, wantVersion, f)
			}
			wantGPUs := 0
			if h.Role == "gpu" {
				wantGPUs = 4
			}
			if f.GPUCount != wantGPUs {
				t.Errorf("GPUCount = %d, want %d", f.GPUCount, wantGPUs)
			}
			// The kernel clock read directly says what the host's own timedatectl says.
			synced, _, err := l.Exec(ctx, h.Name, "timedatectl show -p NTPSynchronized --value")
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSpace(synced) == "yes"; f.TimeSynchronized != want || !strings.HasPrefix(f.TimeSyncDetail, "kernel clock: ") {
				t.Errorf("TimeSynchronized %v (%s), timedatectl says NTPSynchronized=%s", f.TimeSynchronized, f.TimeSyncDetail, strings.TrimSpace(synced))
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

// With slurmd installed (from the lab's local repository) its -C output
// takes precedence over lscpu. What the test installs it purges again.
func TestLabGatherFromSlurmd(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 3*time.Minute)
	gpus := l.HostsWithRole(lab.RoleGPU)
	node := gpus[len(gpus)-1].Name
	before := installedPackages(ctx, t, l, node)
	// Debian starts slurmd on install; unconfigured, it retries until systemd's
	// 90 s start timeout. policy-rc.d is Debian's way to install without starting.
	script := `printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurmd; rc=$?
rm -f /usr/sbin/policy-rc.d; exit $rc`
	_, stderr, err := l.Exec(ctx, node, script)
	var added []string
	for _, pkg := range installedPackages(ctx, t, l, node) {
		if !slices.Contains(before, pkg) {
			added = append(added, pkg)
		}
	}
	if len(added) > 0 {
		t.Cleanup(func() {
			script := "DEBIAN_FRONTEND=noninteractive apt-get purge -y " + strings.Join(added, " ")
			if _, stderr, err := l.Exec(context.Background(), node, script); err != nil {
				t.Errorf("cleanup: %v: %s", err, stderr)
			}
		})
	}
	if err != nil {
		t.Fatalf("%s: %v: %s", script, err, stderr)
	}
	f, err := Gather(ctx, labHost{transporttest.LabHost{Lab: l, Host: node}})
	if err != nil {
		t.Fatal(err)
	}
	// The version as the host's own slurmd prints it: 24.11 or 26.05, by the lab's release.
	out, stderr, err := l.Exec(ctx, node, "slurmd -V")
	if err != nil {
		t.Fatalf("slurmd -V: %v: %s", err, stderr)
	}
	if want := strings.Fields(out); len(want) != 2 || f.SlurmdVersion != want[1] {
		t.Errorf("slurmd version %q, the host's slurmd -V says %q", f.SlurmdVersion, out)
	}
	if f.FactsSource != SourceSlurmd || f.CPUs < 1 || f.RealMemoryMiB < 1 || f.Boards != 1 {
		t.Errorf("hardware facts: %+v", f)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("warnings: %q", f.Warnings)
	}
}

func installedPackages(ctx context.Context, t *testing.T, l *lab.Lab, node string) []string {
	t.Helper()
	out, stderr, err := l.Exec(ctx, node, `dpkg-query -W -f='${db:Status-Status} ${Package}\n' | sed -n 's/^installed //p'`)
	if err != nil {
		t.Fatalf("list packages on %s: %v: %s", node, err, stderr)
	}
	return strings.Fields(out)
}

// The drop-in on a real sshd: refused when it would lock admin out, written,
// validated and reloaded, reported by Gather, and removed.
func TestLabAllowGroups(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
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
