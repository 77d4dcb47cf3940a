package transport

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestReadCacheSharesAReadUntilAChange(t *testing.T) {
	var c readCache
	ctx := context.Background()
	var runs atomic.Int32
	read := func() string {
		res, err := c.read(ctx, "cat /etc/ufw/user.rules", func() (Result, error) {
			return Result{Stdout: []byte{byte('0' + runs.Add(1))}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Stdout)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); read() }()
	}
	wg.Wait()
	if got := read(); got != "1" || runs.Load() != 1 {
		t.Fatalf("11 reads ran the script %d times and saw %q, want once", runs.Load(), got)
	}
	c.changing()
	if got := read(); got != "2" {
		t.Fatalf("a read after a change saw %q, want a new result", got)
	}
}

// A change that begins while a read runs may or may not be in what the read saw: the result
// serves its own callers but is not kept for later ones.
func TestReadCacheDropsAReadThatOverlappedAChange(t *testing.T) {
	var c readCache
	ctx := context.Background()
	var runs atomic.Int32
	run := func() (Result, error) {
		if runs.Add(1) == 1 {
			c.changing()
		}
		return Result{}, nil
	}
	for range 2 {
		if _, err := c.read(ctx, "getent passwd alice", run); err != nil {
			t.Fatal(err)
		}
	}
	if runs.Load() != 2 {
		t.Errorf("the script ran %d times, want 2: the first result overlapped a change", runs.Load())
	}
}

func TestReadCacheKeepsNoFailure(t *testing.T) {
	var c readCache
	ctx := context.Background()
	failed := errors.New("connection lost")
	if _, err := c.read(ctx, "id", func() (Result, error) { return Result{}, failed }); !errors.Is(err, failed) {
		t.Fatalf("got %v, want the failure", err)
	}
	res, err := c.read(ctx, "id", func() (Result, error) { return Result{Stdout: []byte("0")}, nil })
	if err != nil || string(res.Stdout) != "0" {
		t.Fatalf("a read after a failed one got %q, %v; want it run again", res.Stdout, err)
	}
}

// Each caller gets output of its own: one that wipes what it read (a key) leaves the next
// caller's copy intact.
func TestReadCacheHandsOutCopies(t *testing.T) {
	var c readCache
	ctx := context.Background()
	run := func() (Result, error) { return Result{Stdout: []byte("secret")}, nil }
	first, err := c.read(ctx, "cat /etc/munge/munge.key", run)
	if err != nil {
		t.Fatal(err)
	}
	clear(first.Stdout)
	second, err := c.read(ctx, "cat /etc/munge/munge.key", func() (Result, error) {
		t.Fatal("the shared read ran again")
		return Result{}, nil
	})
	if err != nil || string(second.Stdout) != "secret" {
		t.Fatalf("the second caller got %q, %v; want its own copy of the shared output", second.Stdout, err)
	}
}
