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

	"golang.org/x/crypto/ssh"
)

// SudoErrorKind tells why sudo did not run a command.
type SudoErrorKind int

// Kinds of SudoError.
const (
	// SudoFailed: sudo refused or failed for another reason (not in
	// sudoers, sudo missing, ...); Stderr has sudo's words.
	SudoFailed SudoErrorKind = iota
	// SudoWrongPassword: sudo asked again after the password was sent.
	SudoWrongPassword
	// SudoPasswordRequired: sudo wants a password and none is configured.
	SudoPasswordRequired
)

// SudoError reports that sudo never started the command. It never carries
// the password.
type SudoError struct {
	Host   string
	User   string
	Exe    string
	Kind   SudoErrorKind
	Stderr string
}

func (e *SudoError) Error() string {
	switch e.Kind {
	case SudoWrongPassword:
		return fmt.Sprintf("sudo rejected the password for %s on %s", e.User, e.Host)
	case SudoPasswordRequired:
		return fmt.Sprintf("sudo on %s requires a password for %s and no sudo password is configured", e.Host, e.User)
	default:
		return fmt.Sprintf("sudo (%s) failed on %s for %s before running the command: %s", e.Exe, e.Host, e.User, strings.TrimSpace(e.Stderr))
	}
}

// Sudo runs script with /bin/sh as root through the configured sudo.
//
// The password goes on stdin, answering sudo's prompt, and the command's
// own stdin follows only once the command has announced on stderr that it
// runs. Both sudo-rs and classic sudo read the password through a buffer, so
// sending both at once would let sudo swallow the start of the payload.
// -k ignores cached credentials: a wrong password is then always detected,
// not hidden by an earlier success.
func (h *Host) Sudo(ctx context.Context, script string, stdin []byte) (Result, error) {
	h.logRun(script, true)
	w := newSudoWatcher(h.cfg.SudoPassword, stdin)
	var stdout bytes.Buffer
	runErr, err := h.exec(ctx, w.command(h.cfg.SudoExe, script), func(sess *ssh.Session) error {
		sess.Stdout = &stdout
		in, err := sess.StdinPipe()
		if err != nil {
			return err
		}
		errPipe, err := sess.StderrPipe()
		if err != nil {
			return err
		}
		go w.watch(errPipe, in, func() { _ = sess.Close() })
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	<-w.done
	if !w.started() {
		return h.sudoFailed(w, Result{Stdout: stdout.Bytes(), Stderr: []byte(w.sudoStderr())}, runErr)
	}
	return h.outcome(Result{Stdout: stdout.Bytes(), Stderr: w.commandStderr()}, runErr)
}

func (h *Host) sudoFailed(w *sudoWatcher, res Result, runErr error) (Result, error) {
	sudoErr := &SudoError{Host: h.cfg.Name, User: h.cfg.User, Exe: h.cfg.SudoExe, Kind: SudoWrongPassword, Stderr: string(res.Stderr)}
	if w.rejected() {
		// The session was cut on purpose, so runErr says nothing more.
		res.Status = -1
		return res, sudoErr
	}
	res, err := h.outcome(res, runErr)
	var exitErr *ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, err
	}
	sudoErr.Kind = SudoFailed
	if len(h.cfg.SudoPassword) == 0 && asksForPassword(string(res.Stderr)) {
		sudoErr.Kind = SudoPasswordRequired
	}
	return res, sudoErr
}

// asksForPassword recognises `sudo -n` refusing for lack of a password:
// classic sudo says "a password is required", sudo-rs "interactive
// authentication is required".
func asksForPassword(stderr string) bool {
	return strings.Contains(stderr, "password is required") || strings.Contains(stderr, "authentication is required")
}

// sudoWatcher drives one sudo invocation from its stderr: it answers the
// first password prompt, stops at a second one (wrong password), and feeds
// the payload once the command started.
type sudoWatcher struct {
	password []byte
	payload  []byte
	parser   sudoStderr
	done     chan struct{}
	mu       sync.Mutex
	refused  bool
}

func newSudoWatcher(password, payload []byte) *sudoWatcher {
	token := randomToken()
	return &sudoWatcher{
		password: password,
		payload:  payload,
		parser: sudoStderr{
			prompt: "gpucluster-sudo-prompt-" + token,
			marker: "gpucluster-sudo-started-" + token,
		},
		done: make(chan struct{}),
	}
}

// command is the sudo command line. It carries the prompt and marker, never
// the password.
func (w *sudoWatcher) command(exe, script string) string {
	inner := Command("printf", "%s", w.parser.marker) + " >&2; exec " + Command("/bin/sh", "-c", script)
	args := []string{exe, "-k"}
	if len(w.password) > 0 {
		args = append(args, "-S", "-p", w.parser.prompt)
	} else {
		args = append(args, "-n")
	}
	return Command(append(args, "--", "/bin/sh", "-c", inner)...)
}

// watch follows stderr until it ends. abort ends the session: after a
// rejected password, letting sudo go on would only add failed attempts
// (which may lock the account) and seconds of PAM delay.
func (w *sudoWatcher) watch(stderr io.Reader, stdin io.WriteCloser, abort func()) {
	defer close(w.done)
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

func (w *sudoWatcher) react(ev sudoEvent, stdin io.WriteCloser, abort func()) {
	switch {
	case ev.started:
		// The command may not read its stdin for a while; writing in the
		// background keeps stderr drained meanwhile.
		go func() {
			_, _ = stdin.Write(w.payload)
			_ = stdin.Close()
		}()
	case ev.prompts == 1 && len(w.password) > 0:
		answer := append(append(make([]byte, 0, len(w.password)+1), w.password...), '\n')
		_, _ = stdin.Write(answer)
		clear(answer)
	case ev.prompts > 0:
		w.mu.Lock()
		w.refused = true
		w.mu.Unlock()
		_ = stdin.Close()
		abort()
	}
}

func (w *sudoWatcher) rejected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

func (w *sudoWatcher) started() bool         { return w.parser.started }
func (w *sudoWatcher) commandStderr() []byte { return w.parser.post }
func (w *sudoWatcher) sudoStderr() string    { return w.parser.sudoOutput() }

// sudoEvent is what one chunk of stderr revealed.
type sudoEvent struct {
	prompts int  // total prompts seen so far, when this chunk added one
	started bool // the command started in this chunk
}

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
