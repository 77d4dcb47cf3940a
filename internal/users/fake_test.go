package users

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// fakeExec answers scripts in order with canned replies and records them.
type fakeExec struct {
	t       *testing.T
	replies []fakeReply
	scripts []string
}

type fakeReply struct {
	stdout string
	err    error
}

func (f *fakeExec) Sudo(_ context.Context, script string, _ []byte) (transport.Result, error) {
	f.scripts = append(f.scripts, script)
	if len(f.replies) == 0 {
		f.t.Fatalf("unexpected script:\n%s", script)
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	return transport.Result{Stdout: []byte(r.stdout)}, r.err
}

// localShell runs scripts with this machine's sh, for scripts that are safe
// to run here (reads, or writes confined to a temporary directory).
type localShell struct{}

func (localShell) Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	res := transport.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		res.Status = exitErr.ExitCode()
		return res, &transport.ExitError{Host: "local", Status: res.Status, Stderr: stderr.String()}
	}
	return res, err
}
