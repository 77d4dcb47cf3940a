package fakehost

import (
	"bytes"
	"context"
	"io"
	"net/netip"
	"path"
	"sync"
)

// Host is one fake machine: its files (accounts live in /etc/passwd and /etc/group as on
// Debian), its systemd units, and the commands its scripts may run. Scripts run one at a time,
// each as a whole, as the provider's root shell would see them if nothing else ran on the
// machine.
type Host struct {
	Name string
	FS   *FS
	// Units are the host's systemd units by name ("munge.service").
	Units *Units
	// Addresses are the host's addresses on eth0, beside the loopback ones.
	Addresses []netip.Prefix

	run sync.Mutex // one script at a time

	mu         sync.Mutex
	commands   map[string]Command
	unmodelled []string
	scripts    []string
	temps      int
	available  map[string]Package
	installed  map[string]string
	munge      mungeState
	drained    map[string]string // Slurm nodes drained, with their reason
}

// NewHost returns a host named name with a minimal Debian system: root and the admin account
// (uid 1000) in the account files, the usual system groups, /etc/shells and its shells,
// /etc/skel and /home.
func NewHost(name string) *Host {
	h := &Host{Name: name, FS: newFS(), Units: newUnits(), commands: map[string]Command{},
		available: map[string]Package{}, installed: map[string]string{}, drained: map[string]string{}}
	for n, c := range coreCommands() {
		h.commands[n] = c
	}
	for n, c := range accountCommands() {
		h.commands[n] = c
	}
	for n, c := range systemCommands() {
		h.commands[n] = c
	}
	h.commands["systemctl"] = systemctl
	h.commands["dpkg-query"] = dpkgQuery
	h.commands["apt-get"] = aptGet
	h.commands["apt-cache"] = aptCache
	h.commands["sed"] = sed
	h.commands["awk"] = awk
	h.commands["ip"] = ipCmd
	seed(h)
	seedSystem(h)
	addMunge(h)
	addUFW(h)
	addSlurm(h)
	return h
}

// Handle makes the host answer command (a name without its directory) with c, in place of
// what the fake models for it, if anything: a test's canned reply for a tool the fake does not
// model, or a fault to inject.
func (h *Host) Handle(name string, c Command) {
	h.mu.Lock()
	h.commands[name] = c
	h.mu.Unlock()
	h.installProgram(name)
}

func (h *Host) command(name string) (Command, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.commands[path.Base(name)]
	return c, ok
}

func (h *Host) noteUnmodelled(msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unmodelled = append(h.unmodelled, msg)
}

// Unmodelled lists what scripts asked for that the fake does not model, in order. A test
// helper fails the test when it is not empty.
func (h *Host) Unmodelled() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.unmodelled...)
}

// Scripts lists every script the provider sent to the root shell, in order.
func (h *Host) Scripts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.scripts...)
}

// Result is how a script ended.
type Result struct {
	Stdout, Stderr string
	Status         int
}

// Run runs a script as root on the host, as an administrator would by hand: for a test to set
// a host up, to make drift, or to look at what the provider left.
func (h *Host) Run(script string) Result {
	var stdout, stderr bytes.Buffer
	status := h.runScript(context.Background(), script, nil, &stdout, &stderr)
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Status: status}
}

func (h *Host) runScript(ctx context.Context, script string, stdin []byte, stdout, stderr *bytes.Buffer) int {
	return h.runCommand(ctx, script, rootEnv, bytes.NewReader(stdin), stdout, stderr)
}

// runCommand runs a command line or script once no other script runs on the host.
func (h *Host) runCommand(ctx context.Context, script string, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	h.run.Lock()
	defer h.run.Unlock()
	return h.interpret(ctx, script, nil, env, stdin, stdout, stderr)
}

// rootShellScript runs one script of the provider's root shell and records it.
func (h *Host) rootShellScript(ctx context.Context, script string, stdin []byte) (status int, stdout, stderr []byte) {
	h.mu.Lock()
	h.scripts = append(h.scripts, script)
	h.mu.Unlock()
	var out, errOut bytes.Buffer
	status = h.runScript(ctx, script, stdin, &out, &errOut)
	return status, out.Bytes(), errOut.Bytes()
}
