package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// The causes a booting machine gives are waited out; the answers of a machine that is up (a
// changed host key, a refused login) and a jump host that cannot be reached are not.
func TestStillBootingClassifiesDialFailures(t *testing.T) {
	const node = "gpu03"
	booting := StillBooting(node)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", asDialError(node, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), true},
		{"no route to host", asDialError(node, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}), true},
		{"connection reset", asDialError(node, fmt.Errorf("ssh handshake with %s: %w", node, syscall.ECONNRESET)), true},
		{"handshake EOF", asDialError(node, fmt.Errorf("ssh handshake with %s as admin: ssh: handshake failed: %w", node, io.EOF)), true},
		{"connect timeout", asDialError(node, fmt.Errorf("ssh handshake with %s: %w", node, context.DeadlineExceeded)), true},
		{"jump host cannot reach the node", asDialError(node, fmt.Errorf("connect to %s through jump host login01: %w", node,
			&ssh.OpenChannelError{Reason: ssh.ConnectionFailed, Message: "Connection refused"})), true},
		{"jump host forbids forwarding", asDialError(node, &ssh.OpenChannelError{Reason: ssh.Prohibited, Message: "administratively prohibited"}), false},
		{"host key changed", asDialError(node, &HostKeyError{Host: node, Known: []string{"ssh-ed25519 SHA256:x"}}), false},
		{"login refused", asDialError(node, fmt.Errorf("ssh handshake with %s as admin: ssh: handshake failed: %w", node,
			errors.New("ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain"))), false},
		{"jump host unreachable", asDialError("login01", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), false},
		{"interrupted", fmt.Errorf("connect to %s: %w", node, context.Canceled), false},
	}
	for _, c := range cases {
		if got := booting(c.err); got != c.want {
			t.Errorf("%s (%v): StillBooting %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

var errStillBooting = errors.New("still booting")

func isStillBooting(err error) bool { return errors.Is(err, errStillBooting) }

// fastWait is a BootWait of timeout whose pauses are short, recording its progress reports.
func fastWait(timeout time.Duration, progress *[]WaitProgress) BootWait {
	w := NewBootWait(timeout, func(p WaitProgress) { *progress = append(*progress, p) })
	w.Backoff, w.MaxBackoff = time.Millisecond, 2*time.Millisecond
	return w
}

// A machine that answers after some attempts is waited for, each failed attempt reported
// with its number and cause.
func TestBootWaitRetriesUntilTheMachineAnswers(t *testing.T) {
	var progress []WaitProgress
	tries := 0
	err := fastWait(time.Minute, &progress).Retry(context.Background(), "gpu03", "10.0.0.13:22", "ssh", isStillBooting, func(context.Context) error {
		if tries++; tries < 4 {
			return errStillBooting
		}
		return nil
	})
	if err != nil || tries != 4 {
		t.Fatalf("Retry: %v after %d tries, want success at the 4th", err, tries)
	}
	if len(progress) != 3 {
		t.Fatalf("%d progress reports, want 3: %+v", len(progress), progress)
	}
	for i, p := range progress {
		if p.Attempt != i+1 || p.Node != "gpu03" || p.Address != "10.0.0.13:22" || p.Waiting != "ssh" || !errors.Is(p.Cause, errStillBooting) {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
}

// A failure that is not a booting machine's ends the wait at once, without a progress report.
func TestBootWaitFailsAtOnceOnOtherErrors(t *testing.T) {
	var progress []WaitProgress
	refused := errors.New("host key changed")
	tries := 0
	err := fastWait(time.Minute, &progress).Retry(context.Background(), "gpu03", "10.0.0.13:22", "ssh", isStillBooting, func(context.Context) error {
		tries++
		return refused
	})
	if !errors.Is(err, refused) || tries != 1 || len(progress) != 0 {
		t.Fatalf("Retry: %v after %d tries and %d reports, want the error after one try and none", err, tries, len(progress))
	}
}

// At the deadline the wait ends with what it waited for, how long, how often, and the last cause.
func TestBootWaitEndsAtTheDeadline(t *testing.T) {
	var progress []WaitProgress
	var tries atomic.Int32
	err := fastWait(50*time.Millisecond, &progress).Retry(context.Background(), "gpu03", "10.0.0.13:22", "boot", isStillBooting, func(ctx context.Context) error {
		tries.Add(1)
		if ctx.Err() != nil {
			return fmt.Errorf("try after the deadline: %w", ctx.Err())
		}
		return errStillBooting
	})
	var timeout *WaitTimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("Retry: %v, want a *WaitTimeoutError", err)
	}
	if timeout.Node != "gpu03" || timeout.Waiting != "boot" || timeout.Waited < 50*time.Millisecond || timeout.Attempts != int(tries.Load()) || !errors.Is(err, errStillBooting) {
		t.Errorf("timeout %+v after %d tries; want gpu03's boot, at least 50ms, every try counted, the last cause kept", timeout, tries.Load())
	}
	if len(progress) < 2 {
		t.Errorf("%d progress reports, want one per retried attempt", len(progress))
	}
}

// A caller's context that ends (Ctrl-C) ends the wait with the try's error, not a timeout.
func TestBootWaitStopsWhenTheCallerGivesUp(t *testing.T) {
	var progress []WaitProgress
	ctx, cancel := context.WithCancel(context.Background())
	err := fastWait(time.Minute, &progress).Retry(ctx, "gpu03", "10.0.0.13:22", "ssh", isStillBooting, func(ctx context.Context) error {
		cancel()
		return fmt.Errorf("dial: %w", ctx.Err())
	})
	var timeout *WaitTimeoutError
	if errors.As(err, &timeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Retry: %v, want the cancelled try's error", err)
	}
}

// dropThenServe accepts TCP connections for srv, closing the first drops of them at once as
// sshd does while it starts, and forwarding the rest to srv.
func dropThenServe(t *testing.T, srv *testServer, drops int32) (port int, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if accepted.Add(1) <= drops {
				_ = c.Close()
				continue
			}
			go forward(c, fmt.Sprintf("127.0.0.1:%d", srv.port()))
		}
	}()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("listener address %v is not TCP", l.Addr())
	}
	return addr.Port, accepted
}

func forward(c net.Conn, to string) {
	defer func() { _ = c.Close() }()
	up, err := net.Dial("tcp", to)
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.Copy(c, up)
}

// A node whose sshd drops the first connections is dialled again until it logs in, although
// the pool otherwise keeps a failed dial for the run; the host then runs commands.
func TestHostWhenUpDialsAgainUntilSSHAnswers(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	port, accepted := dropThenServe(t, srv, 2)
	cfg.Port = port
	key := strings.SplitN(srv.knownHostsLine(), " ", 2)[1]
	if err := os.WriteFile(cfg.KnownHostsFile, []byte(fmt.Sprintf("[127.0.0.1]:%d %s\n", port, key)), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := newTestPool(t)
	if _, err := pool.Host(ctx, cfg); err == nil {
		t.Fatal("the first dial succeeded; want it dropped")
	}
	var progress []WaitProgress
	h, err := pool.HostWhenUp(ctx, cfg, fastWait(time.Minute, &progress))
	if err != nil {
		t.Fatalf("HostWhenUp: %v", err)
	}
	if res, err := h.Run(ctx, "echo up", nil); err != nil || string(res.Stdout) != "up\n" {
		t.Fatalf("run on the host: %q, %v", res.Stdout, err)
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("%d TCP connections, want 3 (two dropped, one logged in)", n)
	}
	if len(progress) != 2 {
		t.Errorf("%d progress reports, want 2 (the failure the pool kept, then one more drop): %+v", len(progress), progress)
	}
}

// A changed host key is refused at the first dial even while waiting for a booting machine.
func TestHostWhenUpNeverRetriesAHostKeyMismatch(t *testing.T) {
	ctx := testContext(t)
	srv, cfg := changedKeyHost(t)
	var progress []WaitProgress
	_, err := newTestPool(t).HostWhenUp(ctx, cfg, fastWait(time.Minute, &progress))
	assertHostKeyError(t, err, cfg.Name)
	srv.mu.Lock()
	dials := len(srv.conns)
	srv.mu.Unlock()
	if dials != 1 || len(progress) != 0 {
		t.Errorf("%d TCP connections and %d progress reports, want 1 and none", dials, len(progress))
	}
}
