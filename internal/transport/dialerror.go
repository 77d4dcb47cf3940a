package transport

import (
	"context"
	"errors"
	"net"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
)

// DialError reports a node the pool could not connect to: the TCP connection, the jump host,
// the host key check or the SSH login failed. The pool keeps it for the rest of the run and
// hands it to every later caller, so the node is dialled once and the failure can be reported
// once (FirstReport). A node behind a jump host that cannot be reached fails with the jump
// host's DialError: the jump host is the node to fix.
type DialError struct {
	Node     string
	Err      error
	reported *atomic.Bool
}

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// FirstReport reports whether this is the first report of the failure in this run; every
// later call, from any caller, returns false.
func (e *DialError) FirstReport() bool { return !e.reported.Swap(true) }

// asDialError marks a failed dial of node as a *DialError, keeping one that a jump host's
// dial already made.
func asDialError(node string, err error) error {
	var de *DialError
	if err == nil || errors.As(err, &de) {
		return err
	}
	return &DialError{Node: node, Err: err, reported: &atomic.Bool{}}
}

// Unreachable tells a node that did not answer at all (no TCP connection, directly or from
// its jump host, within the connect timeout) from one that answered and refused the login or
// its host key: only the former may simply be down.
func (e *DialError) Unreachable() bool {
	var op *net.OpError
	var rejected *ssh.OpenChannelError
	return errors.Is(e.Err, context.DeadlineExceeded) || (errors.As(e.Err, &op) && op.Op == "dial") || errors.As(e.Err, &rejected)
}
