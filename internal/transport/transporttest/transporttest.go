package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Reply is one canned answer of a Fake.
type Reply struct {
	Stdout string
	Err    error
}

// Call is one script a Fake received; Read tells it came through Read, as a shared read.
type Call struct {
	Script string
	Stdin  []byte
	Read   bool
}

// Fake answers Sudo and Read in order with canned replies and records the calls. A
// call beyond the replies fails the test: the code ran a script it should not.
type Fake struct {
	T       testing.TB
	Replies []Reply
	Calls   []Call
}

// Sudo returns the next reply.
func (f *Fake) Sudo(_ context.Context, script string, stdin []byte) (transport.Result, error) {
	return f.reply(Call{Script: script, Stdin: stdin})
}

// Read returns the next reply, recording the call as a read.
func (f *Fake) Read(_ context.Context, script string) (transport.Result, error) {
	return f.reply(Call{Script: script, Read: true})
}

func (f *Fake) reply(call Call) (transport.Result, error) {
	f.Calls = append(f.Calls, call)
	script := call.Script
	if len(f.Replies) == 0 {
		f.T.Fatalf("unexpected script:\n%s", script)
	}
	r := f.Replies[0]
	f.Replies = f.Replies[1:]
	return transport.Result{Stdout: []byte(r.Stdout)}, r.Err
}

// Scripts are the scripts received so far, in order.
func (f *Fake) Scripts() []string {
	scripts := make([]string, len(f.Calls))
	for i, c := range f.Calls {
		scripts[i] = c.Script
	}
	return scripts
}

// Shell runs scripts with this machine's sh, for scripts that are safe to run
// here (reads, or writes confined to a sandbox). Rewrite, when set, adapts a
// script to the sandbox (another PATH, a temporary file) before it runs.
type Shell struct {
	Rewrite func(script string) string
}

// Sudo runs script, as the user running the test.
func (s Shell) Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	if s.Rewrite != nil {
		script = s.Rewrite(script)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sh", "-c", script) //nolint:gosec // G204: a test double; running the test's own script is its purpose.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return result("local", &stdout, &stderr, exitErr.ExitCode())
	}
	if err != nil {
		return transport.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}, fmt.Errorf("run sh: %w", err)
	}
	return result("local", &stdout, &stderr, 0)
}

// Read runs script like Sudo: the shell shares no reads.
func (s Shell) Read(ctx context.Context, script string) (transport.Result, error) {
	return s.Sudo(ctx, script, nil)
}

// LabHost runs scripts as root inside a lab host through lab.Run, the seam
// that stands in for the SSH transport in tests against the lab.
type LabHost struct {
	Lab  *lab.Lab
	Host string
}

// Sudo runs script inside the host.
func (h LabHost) Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	var stdout, stderr bytes.Buffer
	status, err := h.Lab.Run(ctx, h.Host, []string{"/bin/sh", "-c", script}, bytes.NewReader(stdin), &stdout, &stderr)
	if err != nil {
		return transport.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}, err
	}
	return result(h.Host, &stdout, &stderr, status)
}

// Read runs script like Sudo: LabHost shares no reads.
func (h LabHost) Read(ctx context.Context, script string) (transport.Result, error) {
	return h.Sudo(ctx, script, nil)
}

// result reports a non-zero status the way a transport.Host does.
func result(host string, stdout, stderr *bytes.Buffer, status int) (transport.Result, error) {
	res := transport.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Status: status}
	if status != 0 {
		return res, &transport.ExitError{Host: host, Status: status, Stderr: stderr.String()}
	}
	return res, nil
}

// Testdata is the file name under the testdata directory of the package being tested: what a
// host replied or held, for a Fake to reply with or a parser to read.
func Testdata(t testing.TB, name string) string {
	t.Helper()
	// fs.ReadFile on the directory refuses a name that leaves it.
	b, err := fs.ReadFile(os.DirFS("testdata"), name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Files stands in for a host's files, path to content, for code that reads and writes them
// through transport.FileReader and transport.FileWriter. Err, when set, fails every call.
type Files struct {
	Content map[string][]byte
	Written []transport.File
	Err     error
}

// ReadFile returns the content of path; a path not in Content does not exist.
func (f *Files) ReadFile(_ context.Context, path string) ([]byte, bool, error) {
	if f.Err != nil {
		return nil, false, f.Err
	}
	content, ok := f.Content[path]
	return content, ok, nil
}

// WriteFile records file and reports it changed when its content differs from Content's.
func (f *Files) WriteFile(_ context.Context, file transport.File) (bool, error) {
	if f.Err != nil {
		return false, f.Err
	}
	f.Written = append(f.Written, file)
	old, ok := f.Content[file.Path]
	if f.Content == nil {
		f.Content = map[string][]byte{}
	}
	f.Content[file.Path] = file.Content
	return !ok || !bytes.Equal(old, file.Content), nil
}

// Sections frames a listing of sections written for a reader, each a line "@@gpucluster KEY",
// its lines, and a line "@@rc STATUS", as a batched script prints them (transport.SectionFuncs).
// A malformed listing is a mistake in the test, and panics.
func Sections(listing string) string {
	var out strings.Builder
	var key string
	var lines []string
	open := false
	for _, line := range strings.Split(strings.TrimSuffix(listing, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "@@gpucluster ") && !open:
			key, lines, open = strings.TrimPrefix(line, "@@gpucluster "), nil, true
		case strings.HasPrefix(line, "@@rc ") && open:
			status, err := strconv.Atoi(strings.TrimPrefix(line, "@@rc "))
			if err != nil {
				panic(fmt.Sprintf("transporttest.Sections: bad status line %q", line))
			}
			content := strings.Join(lines, "\n")
			if len(lines) > 0 {
				content += "\n"
			}
			fmt.Fprintf(&out, "@@gpucluster %d %d %s\n%s\n", status, len(content), key, content)
			open = false
		case open:
			lines = append(lines, line)
		case line != "":
			panic(fmt.Sprintf("transporttest.Sections: line %q outside a section", line))
		}
	}
	if open {
		panic(fmt.Sprintf("transporttest.Sections: section %q has no status line", key))
	}
	return out.String()
}
