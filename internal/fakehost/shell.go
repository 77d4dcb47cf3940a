package fakehost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// hostPath is the PATH every script starts with, as a login shell on Debian has it for root.
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Call is one command a script runs on the fake host, as its handler sees it.
type Call struct {
	Host   *Host
	Args   []string // Args[0] is the name the script used, path and all
	Dir    string
	Env    expand.Environ
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	ctx    context.Context
}

// Command is a command the fake host models; it returns the exit status.
type Command func(c *Call) int

// Errorf prints a message on the command's stderr, prefixed with its name, and returns status.
func (c *Call) Errorf(status int, format string, args ...any) int {
	_, _ = fmt.Fprintf(c.Stderr, "%s: %s\n", path.Base(c.Args[0]), fmt.Sprintf(format, args...))
	return status
}

// Path makes p absolute against the command's working directory.
func (c *Call) Path(p string) string { return clean(c.Dir, p) }

// NotModelled fails the command loudly and records it on the host, so a test whose scripts
// reach something the fake does not know fails instead of passing by accident.
func (c *Call) NotModelled(what string) int {
	msg := fmt.Sprintf("fakehost: %s not modelled (in %q)", what, strings.Join(c.Args, " "))
	c.Host.noteUnmodelled(msg)
	_, _ = fmt.Fprintln(c.Stderr, msg)
	return 127
}

// Sub runs a script in the same host, with the given stdin and outputs, for commands that
// start a shell (sh -c).
func (c *Call) Sub(script string, params []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var env []string
	c.Env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.Kind == expand.String {
			env = append(env, name+"="+vr.Str)
		}
		return true
	})
	return c.Host.interpret(c.ctx, script, params, env, stdin, stdout, stderr)
}

// runState is what a script's shell keeps between its commands beyond the interpreter's own.
type runState struct{ umask fs.FileMode }

type runKey struct{}

func umaskOf(ctx context.Context) fs.FileMode {
	if st, ok := ctx.Value(runKey{}).(*runState); ok {
		return st.umask
	}
	return 0o022
}

// Umask is the file mode creation mask of the script running the command.
func (c *Call) Umask() fs.FileMode { return umaskOf(c.ctx) }

// rootEnv is the environment a script of the root shell starts with.
var rootEnv = []string{"PATH=" + hostPath, "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/sh"}

// interpret runs script as root in / with the host's commands, files and accounts, and env as
// its environment.
func (h *Host) interpret(ctx context.Context, script string, params, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "sh: %v\n", err)
		return 2
	}
	dropLockDescriptors(file)
	if stdin == nil {
		stdin = &bytes.Buffer{}
	}
	opts := []interp.RunnerOption{
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir("/"),
		interp.StdIO(stdin, stdout, stderr),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return h.exec }),
		interp.OpenHandler(h.open),
		interp.StatHandler(h.stat),
		interp.AccessHandler(h.access),
		interp.ReadDirHandler2(h.readDir),
		interp.CallHandler(h.call),
	}
	if len(params) > 0 {
		opts = append(opts, interp.Params(append([]string{"--"}, params...)...))
	}
	r, err := interp.New(opts...)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "sh: %v\n", err)
		return 2
	}
	err = r.Run(context.WithValue(ctx, runKey{}, &runState{umask: umaskOf(ctx)}), file)
	var status interp.ExitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "sh: %v\n", err)
		return 2
	}
	return 0
}

// dropLockDescriptors removes redirections of descriptors above 2 ("exec 9>LOCK" before
// "flock 9"), which the interpreter does not support. They serve only locks, and a fake host
// runs one script at a time, so every lock is free.
func dropLockDescriptors(file *syntax.File) {
	syntax.Walk(file, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok {
			st.Redirs = slices.DeleteFunc(st.Redirs, func(r *syntax.Redirect) bool {
				return r.N != nil && r.N.Value != "0" && r.N.Value != "1" && r.N.Value != "2"
			})
		}
		return true
	})
}

// call stops builtins that would look at the real machine or that the interpreter lacks:
// `command -v` searches the real PATH, and umask is not one of its builtins; both are answered
// by the fake's own commands.
func (h *Host) call(ctx context.Context, args []string) ([]string, error) {
	switch {
	case args[0] == "command" && len(args) > 1 && args[1] == "-v":
		return append([]string{"fakehost-command-v"}, args[2:]...), nil
	case args[0] == "umask":
		return append([]string{"fakehost-umask"}, args[1:]...), nil
	}
	return args, nil
}

func (h *Host) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	c := &Call{Host: h, Args: args, Dir: hc.Dir, Env: hc.Env, Stdin: hc.Stdin, Stdout: hc.Stdout, Stderr: hc.Stderr, ctx: ctx}
	if c.Stdin == nil {
		c.Stdin = &bytes.Buffer{}
	}
	cmd, ok := h.command(args[0])
	_, installed := h.lookPath(args[0])
	var status int
	// A program the fake models but whose file is absent is not installed, as a package
	// not yet installed; a program it does not model fails loudly, installed or not.
	switch {
	case !ok:
		status = c.NotModelled("command " + path.Base(args[0]))
	case !installed:
		_, _ = fmt.Fprintf(c.Stderr, "sh: 1: %s: not found\n", args[0])
		status = 127
	default:
		status = cmd(c)
	}
	if status != 0 {
		return interp.ExitStatus(exitByte(status))
	}
	return nil
}

func (h *Host) open(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	p = clean(interp.HandlerCtx(ctx).Dir, p)
	if p == "/dev/null" {
		return devNull{}, nil
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		data, err := h.FS.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return readOnly{bytes.NewReader(data)}, nil
	}
	h.FS.mu.Lock()
	defer h.FS.mu.Unlock()
	_, _, err := h.FS.lookup(p, true)
	exists := err == nil
	switch {
	case exists && flag&os.O_EXCL != 0:
		return nil, pathErr("open", p, fs.ErrExist)
	case !exists && flag&os.O_CREATE == 0:
		return nil, pathErr("open", p, fs.ErrNotExist)
	case !exists || flag&os.O_TRUNC != 0:
		if err := h.FS.write(p, nil, perm&^umaskOf(ctx), false); err != nil {
			return nil, err
		}
	}
	return &fileWriter{fs: h.FS, path: p}, nil
}

func (h *Host) stat(ctx context.Context, p string, follow bool) (fs.FileInfo, error) {
	p = clean(interp.HandlerCtx(ctx).Dir, p)
	if p == "/dev/null" {
		return fileInfo{name: "null", n: node{mode: fs.ModeDevice | fs.ModeCharDevice | 0o666}}, nil
	}
	return h.FS.Stat(p, follow)
}

// access answers as for root: everything is readable and writable, and executable when any
// execute bit is set.
func (h *Host) access(ctx context.Context, p string, mode interp.AccessMode) error {
	fi, err := h.stat(ctx, p, true)
	if err != nil {
		return err
	}
	if mode&interp.AccessExec != 0 && !fi.IsDir() && fi.Mode().Perm()&0o111 == 0 {
		return pathErr("access", p, syscall.EACCES)
	}
	return nil
}

func (h *Host) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	infos, err := h.FS.ReadDir(clean(interp.HandlerCtx(ctx).Dir, p))
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		out[i] = fs.FileInfoToDirEntry(fi)
	}
	return out, nil
}

type devNull struct{}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(p []byte) (int, error) { return len(p), nil }
func (devNull) Close() error                { return nil }

type readOnly struct{ *bytes.Reader }

func (readOnly) Write([]byte) (int, error) { return 0, syscall.EBADF }
func (readOnly) Close() error              { return nil }

// fileWriter appends each write to the file at once, so a reader in the same pipeline sees
// what was written so far, as with a real file.
type fileWriter struct {
	fs   *FS
	path string
}

func (w *fileWriter) Read([]byte) (int, error) { return 0, syscall.EBADF }
func (w *fileWriter) Write(p []byte) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.fs.write(w.path, p, 0o644, true); err != nil {
		return 0, err
	}
	return len(p), nil
}
func (w *fileWriter) Close() error { return nil }

// errStatus turns a Go error into a command's message and status 1.
func errStatus(c *Call, err error) int {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return c.Errorf(1, "%s: %s", pe.Path, describe(pe.Err))
	}
	return c.Errorf(1, "%v", err)
}

// describe words an error as strerror does.
func describe(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrExist):
		return "File exists"
	case errors.Is(err, syscall.ENOTDIR):
		return "Not a directory"
	case errors.Is(err, syscall.EISDIR):
		return "Is a directory"
	case errors.Is(err, syscall.ENOTEMPTY):
		return "Directory not empty"
	}
	return err.Error()
}

// Println writes a line on the command's stdout; a reader that went away is no error of the
// command's.
func (c *Call) Println(args ...any) { _, _ = fmt.Fprintln(c.Stdout, args...) }

// Printf writes on the command's stdout.
func (c *Call) Printf(format string, args ...any) { _, _ = fmt.Fprintf(c.Stdout, format, args...) }
