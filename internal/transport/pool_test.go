package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newTestPool(t *testing.T) *Pool {
	t.Helper()
	p := NewPool()
	t.Cleanup(p.Close)
	return p
}

// connectedHost connects a pool of its own to a test server of its own.
func connectedHost(t *testing.T) (context.Context, *Host, *testServer) {
	t.Helper()
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	h, err := newTestPool(t).Host(ctx, clientConfig(t, client, srv, srv))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, h, srv
}

func TestPoolSharesOneConnection(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	pool := newTestPool(t)

	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := pool.Host(ctx, cfg)
			if err != nil {
				errs <- err
				return
			}
			res, err := h.Run(ctx, "printf hello", nil)
			if err == nil && string(res.Stdout) != "hello" {
				err = errors.New("unexpected output " + string(res.Stdout))
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := srv.handshakes.Load(); n != 1 {
		t.Errorf("%d connections for one host, want 1", n)
	}
}

func TestRunPassesStdinAndReportsExitStatus(t *testing.T) {
	ctx, h, _ := connectedHost(t)
	res, err := h.Run(ctx, "cat; echo oops >&2; exit 3", []byte("payload"))
	var exitErr *ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("got %v, want *ExitError", err)
	}
	if exitErr.Status != 3 || res.Status != 3 || string(res.Stdout) != "payload" || exitErr.Stderr != "oops\n" {
		t.Errorf("got status %d/%d stdout %q stderr %q", exitErr.Status, res.Status, res.Stdout, exitErr.Stderr)
	}
}

func TestRunHonoursContext(t *testing.T) {
	_, h, _ := connectedHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := h.Run(ctx, "sleep 10", nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("got %v after %s, want a prompt deadline error", err, time.Since(start))
	}
}

func TestSessionsStayBelowMaxSessions(t *testing.T) {
	ctx, h, srv := connectedHost(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Run(ctx, "sleep 0.2", nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := srv.maxSessions.Load(); n > maxSessionsPerConn || n < 2 {
		t.Errorf("at most %d sessions ran at once, want 2..%d", n, maxSessionsPerConn)
	}
}

func TestJumpHost(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	jump := newTestServer(t, client)
	target := newTestServer(t, client)
	stranger := newTestServer(t, client)

	jumpCfg := clientConfig(t, client, jump, jump, target)
	cfg := clientConfig(t, client, target, jump, target)
	cfg.Jump = &jumpCfg
	h, err := newTestPool(t).Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Run(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	if jump.tunnels.Load() != 1 || target.handshakes.Load() != 1 {
		t.Errorf("tunnels %d, target handshakes %d; want 1 and 1", jump.tunnels.Load(), target.handshakes.Load())
	}

	t.Run("jump host key is checked", func(t *testing.T) {
		badJump := clientConfig(t, client, jump, stranger, target)
		badJump.Port = jump.port()
		writeKnownHostsFor(t, &badJump, jump, stranger)
		cfg := clientConfig(t, client, target, target)
		cfg.Jump = &badJump
		_, err := newTestPool(t).Host(ctx, cfg)
		assertHostKeyError(t, err, badJump.Name)
		if !strings.Contains(err.Error(), "jump host") {
			t.Errorf("error %q does not say the jump host failed", err)
		}
	})
	t.Run("target key is checked through the jump host", func(t *testing.T) {
		cfg := clientConfig(t, client, target, jump)
		writeKnownHostsFor(t, &cfg, target, stranger)
		cfg.Jump = &jumpCfg
		_, err := newTestPool(t).Host(ctx, cfg)
		assertHostKeyError(t, err, cfg.Name)
	})
}

// writeKnownHostsFor lists impostor's key under real's address.
func writeKnownHostsFor(t *testing.T, cfg *Config, real, impostor *testServer) {
	t.Helper()
	line := strings.Replace(impostor.knownHostsLine(), strings.Split(impostor.knownHostsLine(), " ")[0], strings.Split(real.knownHostsLine(), " ")[0], 1)
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(cfg.KnownHostsFile, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// changedKeyHost is a server the client knows by another server's key, as after a reinstall:
// the server and the client's config for it.
func changedKeyHost(t *testing.T) (*testServer, Config) {
	t.Helper()
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv)
	writeKnownHostsFor(t, &cfg, srv, newTestServer(t, client))
	return srv, cfg
}

func assertHostKeyError(t *testing.T, err error, host string) {
	t.Helper()
	var hkErr *HostKeyError
	if !errors.As(err, &hkErr) {
		t.Fatalf("got %v, want *HostKeyError", err)
	}
	if hkErr.Host != host || len(hkErr.Known) != 1 || !strings.Contains(err.Error(), "has changed") {
		t.Errorf("HostKeyError for %q with known %q: %v; want a changed key of %s", hkErr.Host, hkErr.Known, err, host)
	}
}

func TestHostKeyMismatchIsNeverRetried(t *testing.T) {
	ctx := testContext(t)
	srv, cfg := changedKeyHost(t)
	pool := newTestPool(t)
	for range 3 {
		_, err := pool.Host(ctx, cfg)
		assertHostKeyError(t, err, cfg.Name)
	}
	srv.mu.Lock()
	dials := len(srv.conns)
	srv.mu.Unlock()
	if dials != 1 {
		t.Errorf("%d TCP connections, want 1: a host key mismatch must not be retried", dials)
	}
}

func TestUnknownHostIsRefused(t *testing.T) {
	client := newTestClient(t)
	srv := newTestServer(t, client)
	stranger := newTestServer(t, client)
	_, err := newTestPool(t).Host(testContext(t), clientConfig(t, client, srv, stranger))
	var hkErr *HostKeyError
	if !errors.As(err, &hkErr) || len(hkErr.Known) != 0 || !strings.Contains(err.Error(), "is not known") {
		t.Fatalf("got %v, want an unknown-host *HostKeyError", err)
	}
}

func TestReconnectAfterConnectionDropped(t *testing.T) {
	ctx, h, srv := connectedHost(t)
	if _, err := h.Run(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	srv.dropConnections()
	res, err := h.Run(ctx, "printf again", nil)
	if err != nil || string(res.Stdout) != "again" {
		t.Fatalf("after the drop: %q, %v", res.Stdout, err)
	}
	if n := srv.handshakes.Load(); n != 2 {
		t.Errorf("%d handshakes, want 2 (one reconnect)", n)
	}
}

func TestKeepaliveDetectsDeadServer(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	cfg.KeepaliveInterval = 50 * time.Millisecond
	pool := newTestPool(t)
	h, err := pool.Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pool.get(ctx, h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if c.isBroken() {
		t.Fatal("a healthy connection was marked broken")
	}
	srv.ignoreKeepalive.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for !c.isBroken() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !c.isBroken() {
		t.Fatal("unanswered keepalives did not mark the connection broken")
	}
	srv.ignoreKeepalive.Store(false)
	if _, err := h.Run(ctx, "true", nil); err != nil {
		t.Fatalf("run after the keepalive failure: %v", err)
	}
	if n := srv.handshakes.Load(); n != 2 {
		t.Errorf("%d handshakes, want 2", n)
	}
}

func TestLockIsPerMachine(t *testing.T) {
	ctx, a, b := twoNamesOfOneMachine(t)
	unlock, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotLocked) {
		t.Fatalf("second lock while held: %v, want a deadline error that says the lock was not taken", err)
	}
	unlock()
	unlock() // a second call must not release someone else's lock
	unlockB, err := b.Lock(ctx)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlockB()
}

// A named lock of a machine is apart from its lock and from other names', and the same name is
// one lock on the machine whatever the Host's name.
func TestLockNamedIsApart(t *testing.T) {
	ctx, a, b := twoNamesOfOneMachine(t)
	unlock, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	unlockUFW, err := b.LockNamed(ctx, "ufw")
	if err != nil {
		t.Fatalf("named lock while the machine's lock is held: %v", err)
	}
	unlockOther, err := a.LockNamed(ctx, "other")
	if err != nil {
		t.Fatalf("a second name while the first is held: %v", err)
	}
	unlockOther()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := a.LockNamed(short, "ufw"); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotLocked) {
		t.Fatalf("the same name while held: %v, want a deadline error that says the lock was not taken", err)
	}
	unlockUFW()
	unlockUFW, err = a.LockNamed(ctx, "ufw")
	if err != nil {
		t.Fatalf("named lock after unlock: %v", err)
	}
	unlockUFW()
}

// twoNamesOfOneMachine returns two Hosts of one pool that reach the same machine under two names.
func twoNamesOfOneMachine(t *testing.T) (context.Context, *Host, *Host) {
	t.Helper()
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	pool := newTestPool(t)
	cfg := clientConfig(t, client, srv, srv)
	a, err := pool.Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name = "same machine, other name"
	b, err := pool.Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, a, b
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no credentials", Config{Address: "10.0.0.11", User: "admin", KnownHostsFile: "/k"}, "neither a private key nor ssh-agent"},
		{"no host keys", Config{Address: "10.0.0.11", User: "admin", UseAgent: true}, "host keys cannot be checked"},
		{"no user", Config{Address: "10.0.0.11", UseAgent: true, InsecureIgnoreHostKey: true}, "user is empty"},
		{"bad jump", Config{Address: "10.0.0.11", User: "admin", UseAgent: true, InsecureIgnoreHostKey: true, Jump: &Config{Name: "login01", User: "admin"}}, "jump host of 10.0.0.11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPool().Host(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestPoolKeepsConnectionsApartByTrust(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	stranger := newTestServer(t, client)
	pool := newTestPool(t)
	good := clientConfig(t, client, srv, srv)
	if _, err := pool.Host(ctx, good); err != nil {
		t.Fatal(err)
	}
	bad := good
	writeKnownHostsFor(t, &bad, srv, stranger)
	_, err := pool.Host(ctx, bad)
	assertHostKeyError(t, err, bad.Name)
}

// A node that went away (a reboot) fails its dials, and a failed dial stays for the run; once
// the caller who took it away forgets it, the next use dials afresh and reaches it.
func TestForgetRedialsAFailedDial(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	pool := newTestPool(t)
	if _, err := pool.Host(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	addr := srv.listener.Addr().String()
	_ = srv.listener.Close()
	srv.dropConnections()
	pool.Forget(cfg)
	if _, err := pool.Host(ctx, cfg); err == nil {
		t.Fatal("a node that does not listen was reached")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv.listener = ln
	go srv.serve()
	if _, err := pool.Host(ctx, cfg); err == nil {
		t.Fatal("a failed dial was retried without Forget")
	}
	pool.Forget(cfg)
	h, err := pool.Host(ctx, cfg)
	if err != nil {
		t.Fatalf("after Forget: %v", err)
	}
	if res, err := h.Run(ctx, "printf back", nil); err != nil || string(res.Stdout) != "back" {
		t.Fatalf("after Forget: %q, %v", res.Stdout, err)
	}
}
