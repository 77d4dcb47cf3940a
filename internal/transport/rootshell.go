package transport

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// rootShellScript is the privileged side of a host's root shell, in Perl because perl-base is
// Essential on Debian and Ubuntu and one process can serve every command: a shell loop would
// fork a dozen helpers per command. sudo starts it once per run; it reads framed requests on
// stdin and runs each command at once in its own process, so one slow command (a restart, an
// apt install) never holds up the others.
//
// A request is a line "run ID SCRIPTLEN STDINLEN" followed by that many bytes of script and of
// stdin, or "kill ID 0 0" to end a command whose caller gave up. Each command runs as
// `/bin/sh -c SCRIPT` in / in a process group of its own, so a kill reaches the processes it
// started too. Both sides of the fork make that group: a kill read before the child was
// scheduled would otherwise find no group and miss the command (the parent's call fails
// harmlessly once the child has exec'd, by when the child's own call has made the group). Its stdin, stdout and stderr are pipes, so a secret never touches a disk.
//
// Each reply is a line "@@done ID STATUS STDOUTLEN STDERRLEN" and the two outputs; STATUS is
// the exit code, or 128 plus the signal that ended the command, as a shell reports it.
// A command is done when it closed both outputs and exited, so a daemon it left holding
// them delays only its own reply.
//
// No SIGCHLD handler: Perl runs a handler between statements, so a child that exits just
// before select() is entered leaves select() asleep with the reply unsent until another request
// wakes it, for up to the command timeout. Instead a command whose outputs have closed is
// polled with waitpid, first after 0.2 ms, the wait doubling up to 100 ms: a process closes its
// outputs as it exits, so the first poll nearly always finds it.
//
//go:embed rootshell.pl
var rootShellScript string

// rootShell is the client side: one SSH session whose sudo authenticated once, carrying every
// privileged command of the run to one host. It is safe for concurrent use.
type rootShell struct {
	host    string
	sess    *ssh.Session
	release func()

	writeMu sync.Mutex
	stdin   io.WriteCloser

	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan shellReply
	done    chan struct{} // closed once the shell has ended
	err     error         // why it ended
}

type shellReply struct {
	status         int
	stdout, stderr []byte
}

// maxReplyBytes bounds one output of one command, so a stream out of step cannot make the
// reader allocate whatever number it read.
const maxReplyBytes = 1 << 30

// errShellClosed reports a command lost with its shell; nothing says whether it ran.
var errShellClosed = errors.New("the root shell ended")

// errNotSent reports a command that never reached the shell (it had ended, or the request
// could not be written whole, which the shell never runs), so it may go to a new shell.
var errNotSent = errors.New("the command was not sent")

// startRootShell starts the shell through sudo on an open session. The password (if any)
// answers sudo's first prompt only; a second prompt means it was rejected, and the session is
// cut at once so sudo makes no further attempt.
func startRootShell(ctx context.Context, cfg Config, sess *ssh.Session, release func()) (*rootShell, error) {
	stdin, err := sess.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := sess.StderrPipe()
	if err != nil {
		return nil, err
	}
	w := newSudoWatcher(cfg.SudoPassword)
	// sshd starts the command in the login user's home; sudo and the shell live as long as the
	// run, and must not keep /home busy when a shared filesystem is mounted over it or unmounted.
	if err := sess.Start("cd / && exec " + w.command(cfg.SudoExe, rootShellScript)); err != nil {
		return nil, fmt.Errorf("start sudo on %s: %w", cfg.describe(), err)
	}
	ended := make(chan error, 1)
	go w.watch(stderr, stdin, func() { killSudo(sess) })
	go func() {
		<-w.decided
		if !w.started() {
			ended <- sess.Wait()
		}
	}()
	select {
	case <-w.decided:
	case <-ctx.Done():
		_ = sess.Close()
		return nil, fmt.Errorf("start sudo on %s: %w", cfg.describe(), ctx.Err())
	}
	if !w.started() {
		runErr := <-ended
		<-w.done
		return nil, sudoRefusal(cfg, w, runErr)
	}
	s := &rootShell{
		host:    cfg.Name,
		sess:    sess,
		release: release,
		stdin:   stdin,
		waiting: map[uint64]chan shellReply{},
		done:    make(chan struct{}),
	}
	go s.readReplies(bufio.NewReader(stdout))
	return s, nil
}

// killSudo ends a sudo that asks for the password again. It is killed while it waits at that
// prompt: closing its stdin instead would answer the prompt with an empty password, and sudo
// would go on to a second and a third failed authentication (pam_faillock's usual limit). sshd
// handles the channel's requests in order, so the kill lands before the close ends stdin.
func killSudo(sess *ssh.Session) {
	_ = sess.Signal(ssh.SIGKILL)
	_ = sess.Close()
}

// sudoRefusal explains why sudo ended without starting the shell.
func sudoRefusal(cfg Config, w *sudoWatcher, runErr error) error {
	sudoErr := &SudoError{Host: cfg.Name, User: cfg.User, Exe: cfg.SudoExe, Kind: SudoWrongPassword, Stderr: w.sudoStderr()}
	if w.rejected() {
		return sudoErr
	}
	var exitErr *ssh.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return fmt.Errorf("sudo on %s did not complete: %w: %w", cfg.describe(), errSessionLost, runErr)
	}
	sudoErr.Kind = classifySudo(sudoErr.Stderr, w.answered(), false)
	return sudoErr
}

// run sends one command and waits for its reply. When ctx ends first the command is killed
// on the host and ctx's error returned.
func (s *rootShell) run(ctx context.Context, script string, stdin []byte) (shellReply, error) {
	id, reply, err := s.register()
	if err != nil {
		return shellReply{}, fmt.Errorf("%w: %w", errNotSent, err)
	}
	header := fmt.Sprintf("run %d %d %d\n", id, len(script), len(stdin))
	if err := s.send([]byte(header), []byte(script), stdin); err != nil {
		s.forget(id)
		return shellReply{}, fmt.Errorf("%w: %w", errNotSent, err)
	}
	select {
	case r := <-reply:
		return r, nil
	case <-s.done:
		select {
		case r := <-reply: // the reply came in just before the shell ended
			return r, nil
		default:
			return shellReply{}, s.err
		}
	case <-ctx.Done():
		s.forget(id)
		// The kill is best effort: when it fails the shell is gone and the command with it.
		_ = s.send([]byte(fmt.Sprintf("kill %d 0 0\n", id)))
		return shellReply{}, ctx.Err()
	}
}

func (s *rootShell) register() (uint64, chan shellReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return 0, nil, s.err
	default:
	}
	s.nextID++
	reply := make(chan shellReply, 1)
	s.waiting[s.nextID] = reply
	return s.nextID, reply, nil
}

func (s *rootShell) forget(id uint64) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

// send writes one request whole; requests of concurrent callers never interleave.
func (s *rootShell) send(parts ...[]byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for _, p := range parts {
		if _, err := s.stdin.Write(p); err != nil {
			s.close(fmt.Errorf("%w on %s: send a command: %w", errShellClosed, s.host, err))
			return s.err
		}
	}
	return nil
}

// readReplies hands each reply to its caller until the stream ends or goes out of step.
func (s *rootShell) readReplies(r *bufio.Reader) {
	for {
		id, reply, err := readReply(r)
		if err != nil {
			s.close(fmt.Errorf("%w on %s: %w", errShellClosed, s.host, err))
			return
		}
		s.mu.Lock()
		ch := s.waiting[id]
		delete(s.waiting, id)
		s.mu.Unlock()
		if ch != nil {
			ch <- reply
		}
	}
}

func readReply(r *bufio.Reader) (uint64, shellReply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, shellReply{}, errors.New("the session closed")
		}
		return 0, shellReply{}, err
	}
	bad := fmt.Errorf("unexpected reply line %q", strings.TrimSpace(line))
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[0] != "@@done" {
		return 0, shellReply{}, bad
	}
	id, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0, shellReply{}, bad
	}
	var nums [3]int
	for i, f := range fields[2:] {
		if nums[i], err = strconv.Atoi(f); err != nil || nums[i] < 0 || nums[i] > maxReplyBytes {
			return 0, shellReply{}, bad
		}
	}
	reply := shellReply{status: nums[0], stdout: make([]byte, nums[1]), stderr: make([]byte, nums[2])}
	if _, err := io.ReadFull(r, reply.stdout); err != nil {
		return 0, shellReply{}, fmt.Errorf("read a command's output: %w", err)
	}
	if _, err := io.ReadFull(r, reply.stderr); err != nil {
		return 0, shellReply{}, fmt.Errorf("read a command's output: %w", err)
	}
	return id, reply, nil
}

// close ends the shell once; callers still waiting get err.
func (s *rootShell) close(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	s.err = err
	close(s.done)
	_ = s.sess.Close()
	s.release()
}

func (s *rootShell) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
