package transport

import "context"

// Executor runs a script as root on one host: all that most domain packages need of a Host, so
// that their tests can hand them a fake. Each package names it as its own Executor.
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (Result, error)
}
