package transport

import (
	"fmt"
	"strings"
)

// Result is what a remote command left behind. It is filled even when the
// command failed, so callers can quote the host's own words.
type Result struct {
	Stdout []byte
	Stderr []byte
	Status int
}

// ExitError reports a command that ran and exited non-zero. Transport
// failures (dial, handshake, broken connection) are other error types, so a
// caller can tell "the host said no" from "we never reached the host".
type ExitError struct {
	Host   string
	Status int
	Stderr string
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("%s: command exited with status %d", e.Host, e.Status)
	}
	return fmt.Sprintf("%s: command exited with status %d: %s", e.Host, e.Status, msg)
}
