package transport

import "context"

// The interfaces below are what domain packages need of a Host, so that their tests can hand
// them a fake; each package names the ones it uses under its own names.

// Executor runs a script as root on one host.
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (Result, error)
}

// FileReader reads a file as root; a missing file is exists=false.
type FileReader interface {
	ReadFile(ctx context.Context, path string) (content []byte, exists bool, err error)
}

// FileWriter writes a file as root, atomically and only when it differs.
type FileWriter interface {
	WriteFile(ctx context.Context, f File) (changed bool, err error)
}
