package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Host is one connected node. Its methods are safe for concurrent use; the
// pool owns the connection underneath.
type Host struct {
	pool *Pool
	cfg  Config
}

// Name is the node's name for messages.
func (h *Host) Name() string { return h.cfg.Name }

// Run runs script with /bin/sh as the login user.
func (h *Host) Run(ctx context.Context, script string, stdin []byte) (Result, error) {
	res, err := h.run(ctx, script, stdin)
	return res, h.pool.cutShort(ctx, h.cfg.Name, err)
}

func (h *Host) run(ctx context.Context, script string, stdin []byte) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.CommandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	runErr, err := h.exec(ctx, Command("/bin/sh", "-c", script), func(sess *ssh.Session) error {
		sess.Stdin = bytes.NewReader(stdin)
		sess.Stdout = &stdout
		sess.Stderr = &stderr
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	h.pool.tally(ctx, h.cfg).ran(time.Since(start), stdout.Len()+stderr.Len())
	return h.outcome(Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}, runErr)
}

// ErrNotLocked reports a wait for a machine's lock that ended before the lock was taken, so
// nothing was read or written under it.
var ErrNotLocked = errors.New("the lock was not taken")

// Lock takes this machine's lock, shared by every Host of the pool on it,
// so a read-modify-write of a file is not interleaved with another.
func (h *Host) Lock(ctx context.Context) (unlock func(), err error) {
	return h.take(ctx, h.cfg.machineKey())
}

// LockNamed takes a lock of this machine apart from Lock's and from other names', for what only
// the holders of name touch: they wait for each other, not for Lock's holders. The firewall's
// slow ufw commands (ufw --force enable reloads every rule) held the one lock of the
// controller while the Slurm fragments written there, on a first apply's critical path,
// waited.
func (h *Host) LockNamed(ctx context.Context, name string) (unlock func(), err error) {
	return h.take(ctx, h.cfg.machineKey()+"\x00"+name)
}

func (h *Host) take(ctx context.Context, key string) (unlock func(), err error) {
	l := h.pool.lock(key)
	select {
	case l <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-l }) }, nil
	case <-ctx.Done():
		return nil, h.pool.cutShort(ctx, h.cfg.Name, fmt.Errorf("wait for the lock of %s: %w: %w", h.cfg.Name, ErrNotLocked, ctx.Err()))
	}
}

// exec runs command in a new session after prepare wired its streams. err
// reports a session that could not be set up; runErr is how the command
// ended. A session that cannot be opened because the connection broke is
// retried once on a fresh connection: nothing ran yet, so the retry cannot
// run anything twice.
func (h *Host) exec(ctx context.Context, command string, prepare func(*ssh.Session) error) (runErr, err error) {
	sess, release, err := h.session(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	defer func() { _ = sess.Close() }()
	if err := prepare(sess); err != nil {
		return nil, fmt.Errorf("prepare session on %s: %w", h.cfg.describe(), err)
	}
	start := time.Now()
	// sshd starts the command in the login user's home. Leaving it first keeps
	// no process of ours inside /home, which would make /home busy when a
	// shared filesystem is mounted over it or unmounted.
	runErr = runSession(ctx, sess, "cd / && exec "+command)
	fields := map[string]any{"command": command, "duration_ms": time.Since(start).Milliseconds()}
	if runErr != nil {
		fields["error"] = runErr.Error()
	}
	h.debug(ctx, "ssh command", fields)
	return runErr, nil
}

func (h *Host) session(ctx context.Context) (*ssh.Session, func(), error) {
	for attempt := 0; ; attempt++ {
		c, err := h.pool.get(ctx, h.cfg)
		if err != nil {
			return nil, nil, err
		}
		sess, release, err := c.newSession(ctx)
		if err == nil {
			return sess, release, nil
		}
		if attempt > 0 || !c.isBroken() || ctx.Err() != nil {
			return nil, nil, err
		}
	}
}

// runSession runs command and, when ctx ends first, kills it. A session that could not start
// the command or ended without its exit status lost its channel or connection (errSessionLost).
func runSession(ctx context.Context, sess *ssh.Session, command string) error {
	if err := sess.Start(command); err != nil {
		return fmt.Errorf("%w: %w", errSessionLost, err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		var exitErr *ssh.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			return fmt.Errorf("%w: %w", errSessionLost, err)
		}
		return err
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		_ = sess.Close()
		if err := <-done; err == nil {
			return nil // it finished just before the kill
		}
		return ctx.Err()
	}
}

// outcome turns a session's end into the package's errors: *ExitError when
// the command ran and failed, a wrapped transport error otherwise.
func (h *Host) outcome(res Result, err error) (Result, error) {
	var exitErr *ssh.ExitError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &exitErr):
		res.Status = exitErr.ExitStatus()
		stderr := string(res.Stderr)
		if exitErr.Signal() != "" {
			stderr += fmt.Sprintf("\n(killed by signal %s)", exitErr.Signal())
		}
		return res, &ExitError{Host: h.cfg.Name, Status: res.Status, Stderr: stderr}
	default:
		res.Status = -1
		return res, fmt.Errorf("command on %s did not complete: %w", h.cfg.describe(), err)
	}
}

// debug logs one command or event on this node at DEBUG.
func (h *Host) debug(ctx context.Context, msg string, fields map[string]any) {
	fields["node"] = h.cfg.Name
	h.pool.debug(ctx, msg, fields)
}

// Changed logs, at INFO, one change the provider made on this node ("gpu01: restarted
// slurmctld"), so a run shows what it did where without DEBUG's every command.
func (h *Host) Changed(ctx context.Context, what string) {
	if h.pool.Logger != nil {
		h.pool.Logger.Info(ctx, h.cfg.Name+": "+what, map[string]any{"node": h.cfg.Name})
	}
}

// ChangeLogger is what Changed needs; *Host has it, test doubles may not.
type ChangeLogger interface {
	Changed(ctx context.Context, what string)
}

// Changed logs a change through ex when it can log: domain packages hold their host as a
// narrow interface and report what they changed through this.
func Changed(ctx context.Context, ex Executor, what string) {
	if l, ok := ex.(ChangeLogger); ok {
		l.Changed(ctx, what)
	}
}
