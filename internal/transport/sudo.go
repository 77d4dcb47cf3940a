package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SudoErrorKind tells why sudo did not run a command.
type SudoErrorKind int

// Kinds of SudoError.
const (
	// SudoFailed: sudo refused or failed for another reason (sudo missing,
	// an account PAM refuses, ...); Stderr has sudo's words.
	SudoFailed SudoErrorKind = iota
	// SudoWrongPassword: sudo asked again after the password was sent, or
	// PAM ended the authentication there (pam_faillock's [default=die]).
	SudoWrongPassword
	// SudoPasswordRequired: sudo wants a password and none is configured.
	SudoPasswordRequired
	// SudoAccountLocked: pam_faillock has locked the account, so sudo
	// refuses any password; Faillock has the tally.
	SudoAccountLocked
	// SudoNotAllowed: sudoers does not let the user run commands as root.
	SudoNotAllowed
)

// SudoError reports that sudo never started the command. It never carries
// the password.
type SudoError struct {
	Host   string
	User   string
	Exe    string
	Kind   SudoErrorKind
	Stderr string
	// Faillock is pam_faillock's tally of a locked account.
	Faillock *FaillockTally
	reported atomic.Bool
}

func (e *SudoError) Error() string {
	switch e.Kind {
	case SudoWrongPassword:
		return fmt.Sprintf("sudo rejected the password for %s on %s%s", e.User, e.Host, sudoSaid(e.Stderr))
	case SudoAccountLocked:
		return fmt.Sprintf("sudo refused %s on %s: pam_faillock has locked the account after %d failed authentications (deny=%d)%s", e.User, e.Host, e.Faillock.Failures, e.Faillock.Deny, sudoSaid(e.Stderr))
	case SudoNotAllowed:
		return fmt.Sprintf("sudoers on %s does not let %s run commands as root%s", e.Host, e.User, sudoSaid(e.Stderr))
	case SudoPasswordRequired:
		return fmt.Sprintf("sudo on %s requires a password for %s and no sudo password is configured", e.Host, e.User)
	}
	return fmt.Sprintf("sudo (%s) failed on %s for %s before running the command: %s", e.Exe, e.Host, e.User, strings.TrimSpace(e.Stderr))
}

// FirstReport reports whether this is the first report of the refusal in this run: the pool
// keeps it for the run and hands the same error to every later command on the host, so the
// cause can be explained once.
func (e *SudoError) FirstReport() bool { return !e.reported.Swap(true) }

func sudoSaid(stderr string) string {
	if s := strings.TrimSpace(stderr); s != "" {
		return " (" + strings.ReplaceAll(s, "\n", "; ") + ")"
	}
	return ""
}

// classifySudo tells why sudo ended without starting the command, from what sudo printed
// (PAM's errors as sudo relays them included) and whether the password was answered.
// Transcripts of both sudos on Debian are in sudo_test.go.
func classifySudo(stderr string, answered, reprompted bool) SudoErrorKind {
	switch {
	case reprompted:
		return SudoWrongPassword
	case containsAny(stderr, "I'm afraid I can't do that", "is not in the sudoers file", "is not allowed to execute", "may not run sudo on"):
		return SudoNotAllowed
	case answered && containsAny(stderr, "PAM error: Permission denied", "PAM error: Authentication failure", "incorrect authentication attempt", "incorrect password attempt"):
		return SudoWrongPassword
	case !answered && asksForPassword(stderr):
		return SudoPasswordRequired
	}
	return SudoFailed
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Sudo runs script with /bin/sh as root in the host's root shell.
//
// The shell is started through sudo by the first privileged command of the run and serves
// every later one, so sudo (and PAM behind it) authenticates once per host per run. A refusal
// is remembered: later commands on that host fail at once with the same error and sudo is not
// asked again, so a wrong password costs one failed authentication, however many resources
// the host has. Each command gets ctx's deadline, capped by the host's CommandTimeout; a
// command whose deadline passes is killed on the host.
//
// Every script run through Sudo counts as a change of the host and ends the sharing of Read.
func (h *Host) Sudo(ctx context.Context, script string, stdin []byte) (Result, error) {
	cache := h.pool.readCache(h.cfg.machineKey())
	noteWrite(ctx)
	cache.changing()
	defer cache.changing()
	res, err := h.sudo(ctx, script, stdin)
	return res, h.pool.cutShort(ctx, h.cfg.Name, err)
}

// Read runs script as root like Sudo, for a script that only reads the host. Its result is
// shared: the same script read again on this machine in this run is answered from it, until
// the provider changes anything on the machine, so resources that read the same state (every
// firewall rule of a node reads UFW's rule files) cost that machine one round trip between
// them. A failed read is not shared; the next caller runs the script again.
func (h *Host) Read(ctx context.Context, script string) (Result, error) {
	ran := false
	res, err := h.pool.readCache(h.cfg.machineKey()).read(ctx, script, func() (Result, error) {
		ran = true
		return h.sudo(ctx, script, nil)
	})
	if !ran && err == nil {
		h.pool.tally(ctx, h.cfg).sharedRead()
	}
	return res, h.pool.cutShort(ctx, h.cfg.Name, err)
}

func (h *Host) sudo(ctx context.Context, script string, stdin []byte) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.CommandTimeout)
	defer cancel()
	start := time.Now()
	reply, err := h.runInShell(ctx, script, stdin)
	fields := map[string]any{"script": script, "duration_ms": time.Since(start).Milliseconds()}
	if err != nil {
		fields["error"] = err.Error()
		h.debug(ctx, "sudo command failed", fields)
		return Result{Status: -1}, err
	}
	h.pool.tally(ctx, h.cfg).ran(time.Since(start), len(reply.stdout)+len(reply.stderr))
	fields["status"] = reply.status
	h.debug(ctx, "sudo command", fields)
	res := Result{Stdout: reply.stdout, Stderr: reply.stderr, Status: reply.status}
	if res.Status != 0 {
		return res, &ExitError{Host: h.cfg.Name, Status: res.Status, Stderr: string(res.Stderr)}
	}
	return res, nil
}

// runInShell runs the command in the host's root shell. A shell found ended (its connection
// dropped since the last command) is replaced once: the command never reached it, so it did
// not run and cannot run twice. A shell that cannot be started (no connection, sudo refused)
// is the error as it is.
func (h *Host) runInShell(ctx context.Context, script string, stdin []byte) (shellReply, error) {
	for attempt := 0; ; attempt++ {
		shell, err := h.pool.rootShell(ctx, h.cfg)
		if err != nil {
			return shellReply{}, err
		}
		reply, err := shell.run(ctx, script, stdin)
		switch {
		case errors.Is(err, errNotSent) && attempt == 0:
			continue
		case err != nil:
			return shellReply{}, fmt.Errorf("command on %s did not complete: %w", h.cfg.describe(), err)
		}
		return reply, nil
	}
}

// asksForPassword recognises `sudo -n` refusing for lack of a password:
// classic sudo says "a password is required", sudo-rs "interactive
// authentication is required".
func asksForPassword(stderr string) bool {
	return strings.Contains(stderr, "password is required") || strings.Contains(stderr, "authentication is required")
}

// sudoWatcher drives one sudo invocation from its stderr: it answers the first password
// prompt and stops at a second one (wrong password). decided closes once the command started
// or sudo gave up; done once stderr ended.
type sudoWatcher struct {
	password []byte
	parser   sudoStderr
	decided  chan struct{}
	done     chan struct{}
	decide   func()
	mu       sync.Mutex
	refused  bool
}

func newSudoWatcher(password []byte) *sudoWatcher {
	token := randomToken()
	decided := make(chan struct{})
	return &sudoWatcher{
		password: password,
		parser: sudoStderr{
			prompt: "gpucluster-sudo-prompt-" + token,
			marker: "gpucluster-sudo-started-" + token,
		},
		decided: decided,
		done:    make(chan struct{}),
		decide:  sync.OnceFunc(func() { close(decided) }),
	}
}

// command is the sudo command line that starts the Perl program script with the marker as its
// first argument; script prints the marker on stderr once it is ready. The line carries prompt
// and marker, never the password.
func (w *sudoWatcher) command(exe, script string) string {
	args := []string{exe, "-k"}
	if len(w.password) > 0 {
		args = append(args, "-S", "-p", w.parser.prompt)
	} else {
		args = append(args, "-n")
	}
	return Command(append(args, "--", "/usr/bin/perl", "-e", script, w.parser.marker)...)
}

// watch follows stderr until it ends. abort ends sudo: after a rejected password, letting it
// go on would only add failed attempts (which may lock the account) and seconds of PAM delay.
func (w *sudoWatcher) watch(stderr io.Reader, stdin io.Writer, abort func()) {
	defer close(w.done)
	defer w.decide()
	buf := make([]byte, 4096)
	for {
		n, err := stderr.Read(buf)
		if n > 0 {
			w.react(w.parser.feed(buf[:n]), stdin, abort)
		}
		if err != nil {
			return
		}
	}
}

func (w *sudoWatcher) react(ev sudoEvent, stdin io.Writer, abort func()) {
	switch {
	case ev.started:
		w.decide()
	case ev.prompts == 1 && len(w.password) > 0:
		answer := append(append(make([]byte, 0, len(w.password)+1), w.password...), '\n')
		_, _ = stdin.Write(answer)
		clear(answer)
	case ev.prompts > 0:
		w.mu.Lock()
		w.refused = true
		w.mu.Unlock()
		abort()
		w.decide()
	}
}

// answered may be asked once done is closed.
func (w *sudoWatcher) answered() bool { return len(w.password) > 0 && w.parser.prompts > 0 }

func (w *sudoWatcher) rejected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

// started may be asked once decided is closed.
func (w *sudoWatcher) started() bool { return w.parser.started }

// sudoStderr may be asked once done is closed.
func (w *sudoWatcher) sudoStderr() string { return w.parser.sudoOutput() }

// sudoEvent is what one chunk of stderr revealed.
type sudoEvent struct {
	prompts int  // total prompts seen so far, when this chunk added one
	started bool // the command started in this chunk
}

// maxCommandStderr bounds what is kept of the root shell's own stderr: only its last words
// matter, to explain why it ended.
const maxCommandStderr = 4096

// sudoStderr splits sudo's stderr into sudo's own output (prompts,
// warnings) before the marker and the command's stderr after it. Prompt and
// marker may arrive split across reads, so the whole prefix is rescanned.
type sudoStderr struct {
	prompt, marker string
	pre, post      []byte
	prompts        int
	started        bool
}

func (s *sudoStderr) feed(chunk []byte) sudoEvent {
	if s.started {
		s.post = append(s.post, chunk...)
		if over := len(s.post) - maxCommandStderr; over > 0 {
			s.post = s.post[over:]
		}
		return sudoEvent{}
	}
	s.pre = append(s.pre, chunk...)
	var ev sudoEvent
	if i := bytes.Index(s.pre, []byte(s.marker)); i >= 0 {
		s.post = append(s.post, s.pre[i+len(s.marker):]...)
		s.pre = s.pre[:i]
		s.started = true
		ev.started = true
	}
	if n := bytes.Count(s.pre, []byte(s.prompt)); n > s.prompts {
		s.prompts = n
		ev.prompts = n
	}
	return ev
}

// sudoOutput is sudo's own stderr without the prompts: sudo-rs prints
// "[sudo: PROMPT] Password: " and classic sudo the bare prompt.
func (s *sudoStderr) sudoOutput() string {
	var lines []string
	for _, line := range strings.Split(string(s.pre), "\n") {
		line = strings.ReplaceAll(line, "[sudo: "+s.prompt+"] Password: ", "")
		line = strings.TrimSpace(strings.ReplaceAll(line, s.prompt, ""))
		if line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func randomToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
