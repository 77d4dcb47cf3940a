package transport

import "context"

// The interfaces below are what domain packages need of a Host, so that their tests can hand
// them a fake.

// Executor runs scripts as root on one host. Sudo is for a script that may change the host;
// Read is for one that only reads it, whose result other reads of the same script on that host
// may share until the next change there (see Host.Read).
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (Result, error)
	Read(ctx context.Context, script string) (Result, error)
}

// FileReader reads a file as root; a missing file is exists=false.
type FileReader interface {
	ReadFile(ctx context.Context, path string) (content []byte, exists bool, err error)
}

// FileWriter writes a file as root, atomically and only when it differs.
type FileWriter interface {
	WriteFile(ctx context.Context, f File) (changed bool, err error)
}
