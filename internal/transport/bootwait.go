package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// A machine created in the same run (a cloud instance, a bare-metal server powered on by
// another resource) answers SSH only once its network and sshd are up, and is ready only once
// its first boot (cloud-init, the boot's units) finished. BootWait bounds the wait for both;
// only the causes a booting machine gives are retried, so a host key mismatch or a refused
// login still fails at once.

// Default bounds of the pause between two attempts of a BootWait.
const (
	DefaultBootBackoff    = time.Second
	DefaultBootMaxBackoff = 10 * time.Second
)

// BootWait bounds a wait for a machine that may still be booting.
type BootWait struct {
	// Deadline is when the wait gives up.
	Deadline time.Time
	// Started is when the wait began, for the elapsed time in progress and errors.
	Started time.Time
	// Progress, when set, is told of every attempt that will be retried.
	Progress func(WaitProgress)
	// Backoff and MaxBackoff bound the pause between attempts, doubled from Backoff; zero
	// means the defaults.
	Backoff, MaxBackoff time.Duration
}

// NewBootWait is a BootWait that starts now and gives up after timeout.
func NewBootWait(timeout time.Duration, progress func(WaitProgress)) BootWait {
	now := time.Now()
	return BootWait{Deadline: now.Add(timeout), Started: now, Progress: progress}
}

// WaitProgress is one attempt that failed for a reason worth waiting out.
type WaitProgress struct {
	Node, Address string
	// Waiting says what for: "ssh" or "boot".
	Waiting string
	Attempt int
	Elapsed time.Duration
	Cause   error
}

// WaitTimeoutError reports a wait that ran out of time: the machine never answered SSH, or
// never finished its first boot, within the deadline.
type WaitTimeoutError struct {
	Node, Address string
	Waiting       string
	Attempts      int
	Waited        time.Duration
	Last          error
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("%s (%s) %s after %s and %d attempts; last: %v", e.Node, e.Address, e.Outcome(), e.Waited.Round(time.Second), e.Attempts, e.Last)
}

func (e *WaitTimeoutError) Unwrap() error { return e.Last }

// Outcome says in words what the machine did not do in time.
func (e *WaitTimeoutError) Outcome() string {
	if e.Waiting == "boot" {
		return "did not finish its first boot"
	}
	return "did not answer SSH"
}

// Retry calls try until it succeeds, fails for a reason retryable refuses, or the deadline
// passes (a *WaitTimeoutError). Each try gets a context that ends at the deadline; a caller's
// context that ends first ends the wait with the try's error.
func (w BootWait) Retry(ctx context.Context, node, address, waiting string, retryable func(error) bool, try func(context.Context) error) error {
	waitCtx, cancel := context.WithDeadline(ctx, w.Deadline)
	defer cancel()
	backoff := firstNonZeroDuration(w.Backoff, DefaultBootBackoff)
	maxBackoff := firstNonZeroDuration(w.MaxBackoff, DefaultBootMaxBackoff)
	var last error
	for attempt := 1; ; attempt++ {
		err := try(waitCtx)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return err
		case waitCtx.Err() != nil:
			// The deadline cut this try short: what the machine last answered is the cause.
			if last != nil && errors.Is(err, context.DeadlineExceeded) {
				err = last
			}
			return w.timeout(node, address, waiting, attempt, err)
		case !retryable(err):
			return err
		}
		last = err
		if w.Progress != nil {
			w.Progress(WaitProgress{Node: node, Address: address, Waiting: waiting, Attempt: attempt, Elapsed: time.Since(w.Started), Cause: err})
		}
		select {
		case <-time.After(backoff):
			backoff = min(2*backoff, maxBackoff)
			if waitCtx.Err() == nil {
				continue
			}
		case <-waitCtx.Done():
		}
		if ctx.Err() != nil {
			return err
		}
		return w.timeout(node, address, waiting, attempt, err)
	}
}

func (w BootWait) timeout(node, address, waiting string, attempts int, last error) *WaitTimeoutError {
	return &WaitTimeoutError{Node: node, Address: address, Waiting: waiting, Attempts: attempts, Waited: time.Since(w.Started), Last: last}
}

func firstNonZeroDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// StillBooting reports whether a failed dial of node is how a machine that is still booting
// answers: no route yet, nothing listening on the SSH port, a connection cut during the
// handshake (sshd starting, or refusing logins until boot ends), a connect timeout, or the
// jump host reporting one of these. A host key mismatch, a refused login, and a jump host that
// cannot be reached are answers of machines that are up, and are not.
func StillBooting(node string) func(error) bool {
	return func(err error) bool {
		var de *DialError
		var hk *HostKeyError
		var opened *ssh.OpenChannelError
		var netErr net.Error
		switch {
		case errors.As(err, &de) && de.Node != node, errors.As(err, &hk), errors.Is(err, context.Canceled):
			return false
		case errors.As(err, &opened):
			return opened.Reason == ssh.ConnectionFailed
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded),
			errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
			errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
			return true
		}
		return errors.As(err, &netErr) && netErr.Timeout()
	}
}

// HostWhenUp is Host for a machine that may still be booting: a dial that fails the way a
// booting machine does is forgotten and tried again until wait's deadline, instead of being
// kept for the run.
func (p *Pool) HostWhenUp(ctx context.Context, cfg Config, wait BootWait) (*Host, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	retryable := StillBooting(cfg.Name)
	err := wait.Retry(ctx, cfg.Name, cfg.hostPort(), "ssh", retryable, func(ctx context.Context) error {
		_, err := p.get(ctx, cfg)
		if err != nil && retryable(err) {
			p.forgetFailedDial(cfg)
		}
		return err
	})
	if err != nil {
		return nil, p.cutShort(ctx, cfg.Name, err)
	}
	return &Host{pool: p, cfg: cfg}, nil
}

// forgetFailedDial drops cfg's failed dial, so the next get dials again.
func (p *Pool) forgetFailedDial(cfg Config) {
	key := cfg.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.conns[key]
	if c == nil {
		return
	}
	select {
	case <-c.ready:
		if c.err != nil {
			delete(p.conns, key)
		}
	default:
	}
}
