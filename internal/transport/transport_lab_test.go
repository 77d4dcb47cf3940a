package transport_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

const (
	sudoRs      = "/usr/bin/sudo"
	sudoClassic = "/usr/bin/sudo.ws"
)

func labContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// labConfig is how the provider reaches a lab host by default: GPU servers
// through login01.
func labConfig(t testing.TB, l *lab.Lab, name string) transport.Config {
	t.Helper()
	key, err := os.ReadFile(l.AdminKeyPath)
	if err != nil {
		t.Fatalf("read the lab's admin key: %v", err)
	}
	h := l.Host(name)
	if h.Address == "" {
		t.Fatalf("the lab has no host %s", name)
	}
	cfg := transport.Config{
		Name:           h.Name,
		Address:        h.Address,
		User:           l.AdminUser,
		PrivateKey:     key,
		KnownHostsFile: l.KnownHostsPath,
		ConnectTimeout: 10 * time.Second,
		SudoPassword:   []byte(l.AdminPassword),
	}
	if h.Role != lab.RoleLogin {
		jump := labConfig(t, l, lab.LoginHost)
		cfg.Jump = &jump
	}
	return cfg
}

// eventLog records the pool's log messages for assertions.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) Debug(_ context.Context, msg string, fields map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, fmt.Sprintf("%s %v", msg, fields["node"]))
}

func (e *eventLog) Info(ctx context.Context, msg string, fields map[string]any) {
	e.Debug(ctx, msg, fields)
}

func (e *eventLog) count(event string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if ev == event {
			n++
		}
	}
	return n
}

func newLabPool(t *testing.T) (*transport.Pool, *eventLog) {
	t.Helper()
	events := &eventLog{}
	pool := transport.NewPool()
	pool.Logger = events
	t.Cleanup(pool.Close)
	return pool, events
}

// labHost connects a pool of its own to a lab host, the way the provider does.
func labHost(ctx context.Context, t *testing.T, l *lab.Lab, name string) *transport.Host {
	t.Helper()
	pool, _ := newLabPool(t)
	h, err := pool.Host(ctx, labConfig(t, l, name))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLabJumpHostPath(t *testing.T) {
	l := lab.Require(t)
	ctx := labContext(t)
	pool, events := newLabPool(t)
	h, err := pool.Host(ctx, labConfig(t, l, "gpu01"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(ctx, `printf '%s %s %s' "$(hostname)" "${SSH_CLIENT%% *}" "$PWD"`, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The working directory is / rather than the admin's home, which may be on
	// a filesystem that is about to be mounted over or unmounted.
	if got, want := string(res.Stdout), "gpu01 "+l.Host(lab.LoginHost).Address+" /"; got != want {
		t.Errorf("got %q, want %q: gpu01 must be reached from login01, commands run in /", got, want)
	}
	if events.count("ssh connected login01") != 1 || events.count("ssh connected gpu01") != 1 {
		t.Errorf("events %q: want one connection to login01 and one to gpu01", events.events)
	}
}

func TestLabDirectConnectionToGPUServerRefused(t *testing.T) {
	l := lab.Require(t)
	pool, _ := newLabPool(t)
	cfg := labConfig(t, l, "gpu01")
	cfg.Jump = nil
	_, err := pool.Host(labContext(t), cfg)
	if err == nil {
		t.Fatal("gpu01 accepted a direct connection; the lab should only admit login01")
	}
	var hkErr *transport.HostKeyError
	if errors.As(err, &hkErr) {
		t.Fatalf("refused for the wrong reason: %v", err)
	}
	t.Logf("refused as expected: %v", err)
}

func TestLabHostKeyMismatchRefused(t *testing.T) {
	l := lab.Require(t)
	wrongKey := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
	tests := []struct {
		name     string
		mutate   func(cfg *transport.Config)
		wantHost string
	}{
		{"target", func(cfg *transport.Config) {
			cfg.KnownHostsFile, cfg.HostKeys = "", []string{wrongKey}
		}, "gpu01"},
		{"jump host", func(cfg *transport.Config) {
			cfg.Jump.KnownHostsFile, cfg.Jump.HostKeys = "", []string{wrongKey}
		}, lab.LoginHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, _ := newLabPool(t)
			cfg := labConfig(t, l, "gpu01")
			tt.mutate(&cfg)
			_, err := pool.Host(labContext(t), cfg)
			var hkErr *transport.HostKeyError
			if !errors.As(err, &hkErr) {
				t.Fatalf("got %v, want *HostKeyError", err)
			}
			if hkErr.Host != tt.wantHost || !strings.Contains(err.Error(), "has changed") {
				t.Errorf("error for %s: %v", hkErr.Host, err)
			}
		})
	}
}

func TestLabSudoWithPassword(t *testing.T) {
	l := lab.Require(t)
	for _, exe := range []string{sudoRs, sudoClassic} {
		t.Run(exe, func(t *testing.T) {
			ctx := labContext(t)
			pool, _ := newLabPool(t)
			cfg := labConfig(t, l, "gpu01")
			cfg.SudoExe = exe
			h, err := pool.Host(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			assertRoot(ctx, t, h)

			t.Run("wrong password", func(t *testing.T) {
				cfg.SudoPassword = []byte("not the password")
				wrong, err := pool.Host(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				_, err = wrong.Sudo(ctx, "id -u", nil)
				var sudoErr *transport.SudoError
				if !errors.As(err, &sudoErr) || sudoErr.Kind != transport.SudoWrongPassword {
					t.Fatalf("got %v, want a wrong password error", err)
				}
				said := map[string]string{sudoRs: "sudo: Authentication failed, try again.", sudoClassic: "Sorry, try again."}[exe]
				if got, want := err.Error(), "sudo rejected the password for admin on gpu01 ("+said+")"; got != want {
					t.Errorf("message %q, want %q", got, want)
				}
			})
		})
	}
}

func TestLabSudoExecutables(t *testing.T) {
	l := lab.Require(t)
	ctx := labContext(t)
	h := labHost(ctx, t, l, "gpu01")
	// sudo-rs prints its version on stderr.
	res, err := h.Run(ctx, transport.Command(sudoRs, "--version")+" 2>&1; "+transport.Command(sudoClassic, "-V"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Stdout); !strings.Contains(out, "sudo-rs") || !strings.Contains(out, "Sudo version 1.") {
		t.Errorf("expected sudo-rs at %s and classic sudo at %s, got %q", sudoRs, sudoClassic, out)
	}
}

func TestLabPasswordlessSudo(t *testing.T) {
	l := lab.Require(t)
	ctx := labContext(t)
	const host = "gpu02"
	if _, _, err := l.Exec(ctx, host, `printf 'admin ALL=(ALL:ALL) NOPASSWD: ALL\n' > /etc/sudoers.d/90-lab-nopasswd && chmod 0440 /etc/sudoers.d/90-lab-nopasswd`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, _, err := l.Exec(context.Background(), host, "rm -f /etc/sudoers.d/90-lab-nopasswd"); err != nil {
			t.Error(err)
		}
	})
	for _, exe := range []string{sudoRs, sudoClassic} {
		t.Run(exe, func(t *testing.T) {
			pool, _ := newLabPool(t)
			cfg := labConfig(t, l, host)
			cfg.SudoExe = exe
			cfg.SudoPassword = nil
			h, err := pool.Host(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			assertRoot(ctx, t, h)
		})
	}
}

func TestLabSudoWithoutPasswordWhereOneIsNeeded(t *testing.T) {
	l := lab.Require(t)
	ctx := labContext(t)
	for _, exe := range []string{sudoRs, sudoClassic} {
		t.Run(exe, func(t *testing.T) {
			pool, _ := newLabPool(t)
			cfg := labConfig(t, l, "gpu01")
			cfg.SudoExe = exe
			cfg.SudoPassword = nil
			h, err := pool.Host(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Sudo(ctx, "id -u", nil)
			var sudoErr *transport.SudoError
			if !errors.As(err, &sudoErr) || sudoErr.Kind != transport.SudoPasswordRequired {
				t.Fatalf("got %v, want SudoPasswordRequired", err)
			}
		})
	}
}

// assertRoot checks that a sudo command runs as root, gets its stdin, and
// returns only its own stderr.
func assertRoot(ctx context.Context, t *testing.T, h *transport.Host) {
	t.Helper()
	res, err := h.Sudo(ctx, `id -u; cat; echo from-command >&2`, []byte("payload line\n"))
	if err != nil {
		t.Fatalf("sudo: %v", err)
	}
	if got := string(res.Stdout); got != "0\npayload line\n" {
		t.Errorf("stdout %q, want uid 0 and the payload", got)
	}
	if got := string(res.Stderr); got != "from-command\n" {
		t.Errorf("stderr %q, want only the command's own", got)
	}
}

func TestLabWriteFile(t *testing.T) {
	l := lab.Require(t)
	ctx := labContext(t)
	h := labHost(ctx, t, l, "gpu01")
	dir := fmt.Sprintf("/var/tmp/transport-lab-%d", os.Getpid())
	if _, _, err := l.Exec(ctx, "gpu01", "mkdir -p "+dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, _, err := l.Exec(context.Background(), "gpu01", "rm -rf "+dir); err != nil {
			t.Error(err)
		}
	})
	path := dir + "/it's a file.conf"
	f := transport.File{Path: path, Content: []byte("secret=$HOME 'x'\n"), Owner: "admin", Group: "admin", Mode: 0o640}

	steps := []struct {
		name        string
		drift       string
		wantChanged bool
	}{
		{"create", "", true},
		{"unchanged", "", false},
		{"mode drift", "chmod 0666 " + transport.Quote(path), true},
		{"owner drift", "chown root " + transport.Quote(path), true},
		{"content drift", "echo by-hand > " + transport.Quote(path), true},
		{"repaired", "", false},
	}
	for _, step := range steps {
		if step.drift != "" {
			if _, _, err := l.Exec(ctx, "gpu01", step.drift); err != nil {
				t.Fatal(err)
			}
		}
		changed, err := h.WriteFile(ctx, f)
		if err != nil || changed != step.wantChanged {
			t.Fatalf("%s: changed=%v err=%v, want changed=%v", step.name, changed, err, step.wantChanged)
		}
		out, _, err := l.Exec(ctx, "gpu01", "stat -c '%U:%G:%a' "+transport.Quote(path)+" && cat "+transport.Quote(path)+" && ls -A "+dir+" | wc -l")
		if err != nil {
			t.Fatal(err)
		}
		if want := "admin:admin:640\n" + string(f.Content) + "1\n"; out != want {
			t.Fatalf("%s: host has %q, want %q", step.name, out, want)
		}
	}
	got, exists, err := h.ReadFile(ctx, path)
	if err != nil || !exists || string(got) != string(f.Content) {
		t.Errorf("ReadFile: %q exists=%v err=%v", got, exists, err)
	}
	if _, exists, err := h.ReadFile(ctx, dir+"/missing"); err != nil || exists {
		t.Errorf("ReadFile of a missing file: exists=%v err=%v", exists, err)
	}
}

func TestLabBrokenConnectionRecovered(t *testing.T) {
	l := lab.Require(t)
	for _, killOn := range []string{"gpu01", lab.LoginHost} {
		t.Run("sshd killed on "+killOn, func(t *testing.T) {
			ctx := labContext(t)
			pool, events := newLabPool(t)
			h, err := pool.Host(ctx, labConfig(t, l, "gpu01"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Run(ctx, "true", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Sudo(ctx, "true", nil); err != nil {
				t.Fatal(err)
			}
			if _, _, err := l.Exec(ctx, killOn, "pkill -f '[s]shd-session: admin'"); err != nil {
				t.Fatal(err)
			}
			res, err := h.Run(ctx, "hostname", nil)
			if err != nil || strings.TrimSpace(string(res.Stdout)) != "gpu01" {
				t.Fatalf("after the kill: %q, %v", res.Stdout, err)
			}
			// The root shell went with the old connection; the next privileged command gets a
			// new one without failing.
			if res, err := h.Sudo(ctx, "id -u", nil); err != nil || strings.TrimSpace(string(res.Stdout)) != "0" {
				t.Fatalf("sudo after the kill: %q, %v", res.Stdout, err)
			}
			if n := events.count("ssh connected gpu01"); n != 2 {
				t.Errorf("gpu01 connected %d times, want 2 (one reconnect); events %q", n, events.events)
			}
		})
	}
}

// sudo and the root shell live for the whole run: neither may keep /home busy, or BeeGFS could
// not be mounted over it or unmounted (the login user's home is where sshd starts commands).
func TestLabRootShellKeepsOutOfHome(t *testing.T) {
	l := lab.Require(t)
	ctx := labContext(t)
	h := labHost(ctx, t, l, "gpu01")
	if _, err := h.Sudo(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	out, _, err := l.Exec(ctx, "gpu01", `for p in $(pgrep -f gpucluster-sudo-started); do printf '%s %s\n' "$(cat /proc/$p/comm)" "$(readlink /proc/$p/cwd)"; done`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("found %q, want sudo and the root shell", out)
	}
	for _, line := range lines {
		if !strings.HasSuffix(line, " /") {
			t.Errorf("%s: works in a directory other than /", line)
		}
	}
}
