package nodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

type fakeReply struct {
	stdout string
	err    error
}

type sudoCall struct {
	script string
	stdin  []byte
}

// fakeHost answers Sudo in order with canned replies and records calls and
// written files.
type fakeHost struct {
	t        *testing.T
	replies  []fakeReply
	calls    []sudoCall
	writes   []transport.File
	changed  bool
	writeErr error
}

func (f *fakeHost) Sudo(_ context.Context, script string, stdin []byte) (transport.Result, error) {
	f.calls = append(f.calls, sudoCall{script, stdin})
	if len(f.replies) == 0 {
		f.t.Fatalf("unexpected script:\n%s", script)
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	return transport.Result{Stdout: []byte(r.stdout)}, r.err
}

func (f *fakeHost) WriteFile(_ context.Context, file transport.File) (bool, error) {
	f.writes = append(f.writes, file)
	return f.changed, f.writeErr
}

// localShell runs scripts with this machine's sh. rewrite adapts a script to
// a sandbox (another PATH, a temporary file) before it runs.
type localShell struct {
	rewrite func(string) string
}

func (l localShell) Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	if l.rewrite != nil {
		script = l.rewrite(script)
	}
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

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// out is one section of the facts script's output.
type out struct {
	text   string
	status int
}

// scriptOutput renders sections the way the facts script prints them.
func scriptOutput(secs map[string]out) []byte {
	var b strings.Builder
	for key, s := range secs {
		fmt.Fprintf(&b, "@@gpucluster %s\n%s\n@@rc %d\n", key, s.text, s.status)
	}
	return []byte(b.String())
}
