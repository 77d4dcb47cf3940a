package lab_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

func TestLabHosts(t *testing.T) {
	l := lab.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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

func TestLabFakeGPUs(t *testing.T) {
	l := lab.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
		for _, want := range []string{"permitrootlogin no", "passwordauthentication no", "kbdinteractiveauthentication no"} {
			if !strings.Contains(out, "\n"+want+"\n") {
				t.Errorf("%s: sshd -T lacks %q", h.Name, want)
			}
		}
	}
}
