package transport

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
)

// listenAndDrop accepts TCP connections and closes them at once, counting them: a port where
// a node answers but no SSH login succeeds.
func listenAndDrop(t *testing.T) (port int, accepted *atomic.Int32) {
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
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("listener address %v is not TCP", l.Addr())
	}
	return addr.Port, accepted
}

// A node that cannot be reached is dialled once per run, and its failure is reported once:
// every later caller gets the same *DialError, which says it was reported already.
func TestFailedDialIsKeptForTheRun(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	port, accepted := listenAndDrop(t)
	cfg.Port = port
	pool := newTestPool(t)
	var first *DialError
	for i := range 5 {
		_, err := pool.Host(ctx, cfg)
		var de *DialError
		if !errors.As(err, &de) {
			t.Fatalf("call %d: %v, want a *DialError", i, err)
		}
		if de.Node != cfg.Name {
			t.Errorf("DialError names %q, want %q", de.Node, cfg.Name)
		}
		if reported := de.FirstReport(); reported != (i == 0) {
			t.Errorf("call %d: FirstReport %v, want it true for the first call only", i, reported)
		}
		if first != nil && de != first {
			t.Errorf("call %d got another DialError than the first call", i)
		}
		first = de
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("%d TCP connections, want 1: a failed dial is kept for the run", n)
	}
}

// A node behind a jump host that cannot be reached fails with the jump host's DialError, so
// the jump host is reported once, not once for each node behind it.
func TestUnreachableJumpHostIsOneFailure(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	target := newTestServer(t, client)
	port, _ := listenAndDrop(t)
	jumpCfg := clientConfig(t, client, target, target)
	jumpCfg.Name, jumpCfg.Port = "login01", port
	pool := newTestPool(t)
	for _, name := range []string{"gpu01", "gpu02"} {
		cfg := clientConfig(t, client, target, target)
		cfg.Name, cfg.Jump = name, &jumpCfg
		_, err := pool.Host(ctx, cfg)
		var de *DialError
		if !errors.As(err, &de) || de.Node != "login01" {
			t.Fatalf("%s: %v, want login01's DialError", name, err)
		}
	}
}
