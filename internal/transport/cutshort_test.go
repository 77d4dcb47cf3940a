package transport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// started returns a script that records its shell's parent in a file and then waits, and a
// function that waits until the script runs and returns that parent's PID.
func started(t *testing.T) (script string, wait func() int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "started")
	script = "echo $PPID > " + Quote(file) + ".tmp && mv " + Quote(file) + ".tmp " + Quote(file) + " && sleep 60"
	return script, func() int {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if data, err := os.ReadFile(file); err == nil {
				pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
				if err != nil {
					t.Fatal(err)
				}
				return pid
			}
			if time.Now().After(deadline) {
				t.Fatal("the command never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// runWhile runs work in the background, calls cut once the command has started, and returns
// work's error.
func runWhile(t *testing.T, work func() error, wait func() int, cut func(pid int)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- work() }()
	cut(wait())
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the command did not end after it was cut short")
		return nil
	}
}

func assertInterrupted(t *testing.T, err error, node string) {
	t.Helper()
	var in *InterruptedError
	if !errors.As(err, &in) || in.Node != node || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want an interruption of %s carrying context.Canceled", err, node)
	}
}

func assertLost(t *testing.T, err error, node string) {
	t.Helper()
	var lost *ConnectionLostError
	var in *InterruptedError
	if !errors.As(err, &lost) || lost.Node != node || errors.As(err, &in) {
		t.Fatalf("got %v, want a lost connection to %s", err, node)
	}
}

// Ctrl-C cancels the request's context: a command cut short by it, as root or as the login
// user, and a wait for the node's lock say so, naming the node, whatever wraps them.
func TestCancelledWorkIsAnInterruption(t *testing.T) {
	h := sudoHost(t, fakeNopasswdSudo, "")
	for name, run := range map[string]func(context.Context, string) error{
		"sudo": func(ctx context.Context, script string) error { _, err := h.Sudo(ctx, script, nil); return err },
		"run":  func(ctx context.Context, script string) error { _, err := h.Run(ctx, script, nil); return err },
	} {
		t.Run(name, func(t *testing.T) {
			script, wait := started(t)
			ctx, cancel := context.WithCancel(testContext(t))
			err := runWhile(t, func() error { return run(ctx, script) }, wait, func(int) { cancel() })
			assertInterrupted(t, err, h.Name())
		})
	}
	unlock, err := h.Lock(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	_, err = h.Lock(ctx)
	assertInterrupted(t, err, h.Name())
	if !errors.Is(err, ErrNotLocked) {
		t.Errorf("got %v, want ErrNotLocked kept", err)
	}
}

// A command that outlives the host's command_timeout timed out; nobody interrupted it.
func TestCommandTimeoutIsNotAnInterruption(t *testing.T) {
	h := sudoHost(t, fakeNopasswdSudo, "")
	h.cfg.CommandTimeout = 300 * time.Millisecond
	_, err := h.Sudo(testContext(t), "sleep 60", nil)
	var in *InterruptedError
	var lost *ConnectionLostError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &in) || errors.As(err, &lost) {
		t.Fatalf("got %v, want a plain deadline", err)
	}
}

// A connection that drops or stops answering keepalives while a command runs, and a root shell
// that ends under it, are a lost connection to the node, not a failure of the command.
func TestCutConnectionIsALostConnection(t *testing.T) {
	tests := map[string]struct {
		run func(h *Host, script string) error
		cut func(srv *testServer, pid int)
	}{
		"keepalive unanswered": {
			func(h *Host, script string) error { _, err := h.Sudo(testContext(t), script, nil); return err },
			func(srv *testServer, _ int) { srv.ignoreKeepalive.Store(true) },
		},
		"connection dropped under sudo": {
			func(h *Host, script string) error { _, err := h.Sudo(testContext(t), script, nil); return err },
			func(srv *testServer, _ int) { srv.dropConnections() },
		},
		"connection dropped under run": {
			func(h *Host, script string) error { _, err := h.Run(testContext(t), script, nil); return err },
			func(srv *testServer, _ int) { srv.dropConnections() },
		},
		"root shell killed": {
			func(h *Host, script string) error { _, err := h.Sudo(testContext(t), script, nil); return err },
			func(_ *testServer, shell int) { _ = syscall.Kill(shell, syscall.SIGKILL) },
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			client := newTestClient(t)
			srv := newTestServer(t, client)
			cfg := clientConfig(t, client, srv, srv)
			cfg.SudoExe = writeScript(t, fakeNopasswdSudo)
			cfg.KeepaliveInterval = 100 * time.Millisecond
			h, err := newTestPool(t).Host(testContext(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			script, wait := started(t)
			err = runWhile(t, func() error { return tt.run(h, script) }, wait, func(pid int) { tt.cut(srv, pid) })
			assertLost(t, err, h.Name())
		})
	}
}

// One report per node and cause in a run: the first error tells the whole story, later ones
// point back to it.
func TestCauseIsReportedOncePerNode(t *testing.T) {
	p := newTestPool(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	first := p.cutShort(ctx, "gpu01", ctx.Err())
	again := p.cutShort(ctx, "gpu01", ctx.Err())
	other := p.cutShort(ctx, "gpu02", ctx.Err())
	lost := p.cutShort(context.Background(), "gpu01", errShellClosed)
	var a, b, c *InterruptedError
	var l *ConnectionLostError
	if !errors.As(first, &a) || !errors.As(again, &b) || !errors.As(other, &c) || !errors.As(lost, &l) {
		t.Fatalf("not marked: %v %v %v %v", first, again, other, lost)
	}
	if !a.FirstReport() || b.FirstReport() || !c.FirstReport() || !l.FirstReport() || l.FirstReport() {
		t.Error("want one first report per node and cause")
	}
}
