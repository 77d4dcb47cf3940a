package lab_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

func TestLabHosts(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	for _, h := range l.Hosts {
		t.Run(h.Name, func(t *testing.T) {
			checks := []struct {
				script string
				want   string
			}{
				{"hostname", h.Name},
				{"systemctl is-system-running | grep -Ex 'running|degraded' >/dev/null && echo ok", "ok"},
				{"readlink -f /usr/bin/sudo", "/usr/lib/cargo/bin/sudo"},
				{"test -u /usr/bin/sudo.ws && echo ok", "ok"},
				{"id -u admin", "1000"},
				{"id -nG admin | tr ' ' '\\n' | grep -x sudo", "sudo"},
				{"ip -4 -o addr show host0 | awk '{print $4}'", h.Address + "/24"},
			}
			for _, c := range checks {
				out, _, err := l.Exec(ctx, h.Name, c.script)
				if err != nil {
					t.Errorf("%s: %v", c.script, err)
					continue
				}
				if got := strings.TrimSpace(out); got != c.want {
					t.Errorf("%s = %q, want %q", c.script, got, c.want)
				}
			}
		})
	}
}

// The packages the provider installs: every host starts without them and
// finds them in the image's local repository.
var repoPackages = []string{"munge", "slurmd", "slurmctld", "slurm-client"}

// Hosts start bare because the image is bare; the image is what every run
// of the lab starts from, while a running host may already carry what
// earlier tests installed.
func TestLabImageHasNoSlurmOrMunge(t *testing.T) {
	l := lab.Require(t)
	admindir := filepath.Join(lab.CurrentImage(l.ReleaseName()).RootFS(), "var", "lib", "dpkg")
	for _, pkg := range repoPackages {
		out, err := runCommand(exec.Command("dpkg-query", "--admindir="+admindir, "-W", "-f=${db:Status-Status}", pkg), "")
		if err == nil && out == "installed" {
			t.Errorf("image %s has %s installed; hosts must start bare", l.Image, pkg)
		}
	}
	// The database itself must be readable, or the loop above proves nothing.
	if out, err := runCommand(exec.Command("dpkg-query", "--admindir="+admindir, "-W", "-f=${db:Status-Status}", "openssh-server"), ""); err != nil || out != "installed" {
		t.Fatalf("image %s: openssh-server status %q, %v", l.Image, out, err)
	}
}

// A host nobody has installed MUNGE or Slurm on yet has none of their
// commands and boots without a failed unit.
func TestLabBareHosts(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	bare := 0
	for _, h := range l.Hosts {
		installed, _, err := l.Exec(ctx, h.Name, "dpkg-query -W -f='${db:Status-Status} ${Package}\\n' "+strings.Join(repoPackages, " ")+" 2>/dev/null | grep '^installed ' || true")
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if installed != "" {
			t.Logf("%s is not bare any more (earlier tests installed packages):\n%s", h.Name, installed)
			continue
		}
		bare++
		out, _, err := l.Exec(ctx, h.Name, "for c in munged mungekey slurmd slurmctld sinfo; do command -v $c || true; done; systemctl is-system-running || true; systemctl --failed --no-legend --plain")
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if strings.TrimSpace(out) != "running" {
			t.Errorf("%s, bare, should have no MUNGE or Slurm commands and be running without failed units:\n%s", h.Name, out)
		}
	}
	if bare == 0 {
		t.Log("no host is bare any more; TestLabImageHasNoSlurmOrMunge still covers the start state")
	}
}

// Lab hosts have no network: the image's local repository is their only
// apt source, and it resolves every package with all its dependencies,
// with and without recommends (simulated, so the host stays as it is).
func TestLabLocalRepository(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	for _, h := range l.Hosts {
		t.Run(h.Name, func(t *testing.T) {
			out, _, err := l.Exec(ctx, h.Name, "cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | grep -E '^(deb|URIs:)'")
			if err != nil || strings.TrimSpace(out) != "URIs: file:"+lab.RepoDir {
				t.Errorf("apt sources = %q, %v; want only file:%s", out, err, lab.RepoDir)
			}
			for _, pkg := range repoPackages {
				out, _, err := l.Exec(ctx, h.Name, "apt-cache policy "+pkg)
				if err != nil {
					t.Fatalf("apt-cache policy %s: %v", pkg, err)
				}
				if strings.Contains(out, "Candidate: (none)") || !strings.Contains(out, "Candidate: ") ||
					!strings.Contains(out, " file:"+lab.RepoDir+" ./ Packages") {
					t.Errorf("apt-cache policy %s: no candidate from file:%s:\n%s", pkg, lab.RepoDir, out)
				}
			}
			for _, opts := range []string{"", "--no-install-recommends"} {
				script := "apt-get install -s -y " + opts + " " + strings.Join(repoPackages, " ")
				if _, _, err := l.Exec(ctx, h.Name, script); err != nil {
					t.Errorf("%s: %v", script, err)
				}
			}
		})
	}
}

func TestLabFakeGPUs(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	for _, h := range l.HostsWithRole(lab.RoleGPU) {
		out, _, err := l.Exec(ctx, h.Name, "nvidia-smi -L")
		if err != nil {
			t.Fatalf("nvidia-smi -L on %s: %v", h.Name, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != lab.GPUsPerServer {
			t.Fatalf("%s lists %d GPUs, want %d:\n%s", h.Name, len(lines), lab.GPUsPerServer, out)
		}
		for i, line := range lines {
			if !strings.HasPrefix(line, fmt.Sprintf("GPU %d: NVIDIA Lab Stand-in (UUID: GPU-", i)) {
				t.Errorf("%s line %d = %q", h.Name, i, line)
			}
		}
	}
	login := l.Host(lab.LoginHost)
	if _, _, err := l.Exec(ctx, login.Name, "command -v nvidia-smi"); err == nil {
		t.Error("login01 has nvidia-smi; only GPU servers should")
	}
}

func TestLabSSHReachesGPUServersOnlyThroughLogin(t *testing.T) {
	l := lab.Require(t)
	login := l.Host(lab.LoginHost)
	gpu := l.HostsWithRole(lab.RoleGPU)[0]

	if out, err := labSSH(l, nil, login.Address, "hostname", ""); err != nil || strings.TrimSpace(out) != login.Name {
		t.Errorf("ssh to login01 = %q, %v; want %q", out, err, login.Name)
	}
	if _, err := labSSH(l, nil, gpu.Address, "true", ""); err == nil {
		t.Errorf("direct ssh from the client to %s succeeded; only login01 may connect", gpu.Name)
	}
	jump := []string{"-o", "ProxyCommand=" + strings.Join(sshBase(l), " ") + " -W %h:%p " + l.AdminUser + "@" + login.Address}
	if out, err := labSSH(l, jump, gpu.Address, "hostname", ""); err != nil || strings.TrimSpace(out) != gpu.Name {
		t.Errorf("ssh to %s through login01 = %q, %v; want %q", gpu.Name, out, err, gpu.Name)
	}
}

func TestLabSudoAcceptsAdminPassword(t *testing.T) {
	l := lab.Require(t)
	login := l.Host(lab.LoginHost)
	for _, sudo := range []string{"sudo", "sudo.ws"} {
		out, err := labSSH(l, nil, login.Address, sudo+" -S -p '' id -u", l.AdminPassword+"\n")
		if err != nil || strings.TrimSpace(out) != "0" {
			t.Errorf("%s as admin = %q, %v; want uid 0", sudo, out, err)
		}
	}
	if out, err := labSSH(l, nil, login.Address, "sudo -S -p '' id -u", "wrong\n"); err == nil {
		t.Errorf("sudo accepted a wrong password: %q", out)
	}
}

func sshBase(l *lab.Lab) []string {
	return []string{"ssh", "-i", l.AdminKeyPath, "-o", "UserKnownHostsFile=" + l.KnownHostsPath,
		"-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5"}
}

// labSSH runs script as the admin user on address, from the client side of the lab network.
func labSSH(l *lab.Lab, extra []string, address, script, stdin string) (string, error) {
	args := append([]string{"netns", "exec", l.Netns}, sshBase(l)...)
	args = append(args, extra...)
	args = append(args, l.AdminUser+"@"+address, script)
	return runCommand(exec.Command("ip", args...), stdin)
}

func runCommand(cmd *exec.Cmd, stdin string) (string, error) {
	var out, errOut bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// Root never logs in over SSH and keys are the only way in, as on the clusters the lab stands
// in for; sshd's effective configuration says so on every host.
func TestLabRefusesRootAndPasswordLogin(t *testing.T) {
	l := lab.Require(t)
	for _, h := range l.Hosts {
		out, stderr, err := l.Exec(context.Background(), h.Name, "sshd -T -C user=root,host=x,addr=10.0.0.1")
		if err != nil {
			t.Fatalf("%s: sshd -T: %v: %s", h.Name, err, stderr)
		}
		// OpenSSH 10.0 (trixie) prints the keys in lower case, 10.6 (forky) as they are spelled.
		out = strings.ToLower(out)
		for _, want := range []string{"permitrootlogin no", "passwordauthentication no", "kbdinteractiveauthentication no"} {
			if !strings.Contains(out, "\n"+want+"\n") {
				t.Errorf("%s: sshd -T lacks %q", h.Name, want)
			}
		}
	}
}
