package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// InterruptedError reports work on a node that the caller's context ended before it finished:
// Terraform cancels a request's context on Ctrl-C (StopProvider), and a resource's timeouts
// block gives it a deadline. The command in flight was killed on the node, or never sent. Err
// is how the work failed; Reason is the context's error, context.Canceled or
// context.DeadlineExceeded.
type InterruptedError struct {
	Node     string
	During   Activity
	Reason   error
	Err      error
	reported *atomic.Bool
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("work on %s was interrupted (%v): %v", e.Node, e.Reason, e.Err)
}

func (e *InterruptedError) Unwrap() []error { return []error{e.Reason, e.Err} }

// FirstReport reports whether this is the first report of an interruption on the node in this
// run; every later call, from any caller, returns false. An error the pool did not make is
// always a first report.
func (e *InterruptedError) FirstReport() bool { return e.reported == nil || !e.reported.Swap(true) }

// ConnectionLostError reports work on a node cut short because the SSH connection to it closed
// (by the node, the network, or a failed keepalive) or the provider's root shell on it ended.
// Whether the command in flight ran is not known.
type ConnectionLostError struct {
	Node     string
	During   Activity
	Err      error
	reported *atomic.Bool
}

func (e *ConnectionLostError) Error() string {
	return fmt.Sprintf("the connection to %s was lost: %v", e.Node, e.Err)
}

func (e *ConnectionLostError) Unwrap() error { return e.Err }

// FirstReport reports whether this is the first report of a lost connection to the node in
// this run; every later call, from any caller, returns false. An error the pool did not make is
// always a first report.
func (e *ConnectionLostError) FirstReport() bool { return e.reported == nil || !e.reported.Swap(true) }

// errSessionLost marks a session that ended without an exit status, or could not be opened on
// a connection that had been working: the connection or the channel went away under it.
var errSessionLost = errors.New("the SSH session ended without an exit status")

// reports keeps, per node and cause, whether the cause was reported in this run.
type reports struct {
	mu    sync.Mutex
	flags map[string]*atomic.Bool
}

func (r *reports) flag(cause, node string) *atomic.Bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.flags == nil {
		r.flags = map[string]*atomic.Bool{}
	}
	key := cause + "\x00" + node
	f, ok := r.flags[key]
	if !ok {
		f = &atomic.Bool{}
		r.flags[key] = f
	}
	return f
}

// cutShort marks err, an error of work on node, with what cut the work short, so every caller's
// error chain carries it: the caller's ctx ended (*InterruptedError), or the connection or the
// root shell ended (*ConnectionLostError). The host's own answers (*ExitError, *SudoError) and
// failed dials (*DialError, reported on their own) stay as they are.
func (p *Pool) cutShort(ctx context.Context, node string, err error) error {
	var (
		exit *ExitError
		sudo *SudoError
		dial *DialError
		in   *InterruptedError
		lost *ConnectionLostError
	)
	switch {
	case err == nil, errors.As(err, &exit), errors.As(err, &sudo), errors.As(err, &dial), errors.As(err, &in), errors.As(err, &lost):
		return err
	case ctx.Err() != nil:
		noteCutShort(ctx)
		return &InterruptedError{Node: node, During: ActivityOf(ctx), Reason: ctx.Err(), Err: err, reported: p.reports.flag("interrupted", node)}
	case errors.Is(err, errShellClosed), errors.Is(err, errSessionLost):
		noteCutShort(ctx)
		return &ConnectionLostError{Node: node, During: ActivityOf(ctx), Err: err, reported: p.reports.flag("lost", node)}
	}
	return err
}

// Activity is what the caller was doing when work on a node was cut short, in words an error
// can use: Verb "Creating", Object "alice". The zero Activity says nothing.
type Activity struct {
	Verb, Object string
}

type activityKey struct{}

// WithActivity labels the work done under ctx, so that *InterruptedError and
// *ConnectionLostError can say what they cut short.
func WithActivity(ctx context.Context, a Activity) context.Context {
	return context.WithValue(ctx, activityKey{}, a)
}

// ActivityOf is the label WithActivity gave ctx, or the zero Activity.
func ActivityOf(ctx context.Context) Activity {
	a, _ := ctx.Value(activityKey{}).(Activity)
	return a
}
