package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// rootShellScript is the privileged side of a host's root shell. sudo starts it once per run;
// it then reads framed requests on stdin and runs each command in the background, so one slow
// command (a restart, an apt install) never holds up the others.
//
// A request is a line "run ID SCRIPTLEN STDINLEN" followed by that many bytes of script and of
// stdin, or "kill ID 0 0" to end a command whose caller gave up. The bytes are stored in a
// root-only directory on /run (a tmpfs, so a secret on stdin never reaches a disk) before the
// command starts, which keeps the request stream in step whatever the command reads.
//
// Each reply is a line "@@done ID STATUS STDOUTLEN STDERRLEN" and the two outputs, written
// under a lock so replies never interleave. Lengths are taken before the copy and the copy
// is cut to them, so a daemon that a command left writing to its output cannot push the
// stream out of step. Each command runs in its own session (setsid), so a kill reaches the
// processes it started too.
const rootShellScript = `set -u
umask 077
d=$(mktemp -d /run/gpucluster-root.XXXXXX) || exit 70
trap 'rm -rf -- "$d"' EXIT
trap 'exit 129' HUP
trap 'exit 143' TERM
job() {
	( cd / && exec setsid /bin/sh "$d/$1.s" <"$d/$1.i" >"$d/$1.o" 2>"$d/$1.e" ) &
	echo "$!" >"$d/$1.p"
	wait "$!"
	rc=$?
	{
		flock 9
		o=$(wc -c <"$d/$1.o") e=$(wc -c <"$d/$1.e")
		printf '@@done %s %s %s %s\n' "$1" "$rc" "$o" "$e"
		head -c "$o" "$d/$1.o"
		head -c "$e" "$d/$1.e"
	} 9>>"$d/lock"
	rm -f -- "$d/$1.s" "$d/$1.i" "$d/$1.o" "$d/$1.e" "$d/$1.p"
}
printf '%s' "$1" >&2
while read -r op id sl il; do
	case "$id$sl$il" in ''|*[!0-9]*) echo "gpucluster root shell: bad request" >&2; exit 65;; esac
	case "$op" in
	run)
		head -c "$sl" >"$d/$id.s" && head -c "$il" >"$d/$id.i" || exit 66
		( job "$id" & )
		;;
	kill)
		[ ! -s "$d/$id.p" ] || kill -KILL "-$(cat "$d/$id.p")" 2>/dev/null || :
		;;
	*) echo "gpucluster root shell: bad request" >&2; exit 65;;
	esac
done
`

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

// errShellClosed reports a command lost with its shell; nothing says whether it ran.
var errShellClosed = errors.New("the root shell ended")

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
	if err := sess.Start(w.command(cfg.SudoExe, rootShellScript)); err != nil {
		return nil, fmt.Errorf("start sudo on %s: %w", cfg.describe(), err)
	}
	ended := make(chan error, 1)
	go w.watch(stderr, stdin, func() { _ = sess.Close() })
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

// sudoRefusal explains why sudo ended without starting the shell.
func sudoRefusal(cfg Config, w *sudoWatcher, runErr error) error {
	sudoErr := &SudoError{Host: cfg.Name, User: cfg.User, Exe: cfg.SudoExe, Kind: SudoWrongPassword, Stderr: w.sudoStderr()}
	if w.rejected() {
		return sudoErr
	}
	var exitErr *ssh.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return fmt.Errorf("sudo on %s did not complete: %w", cfg.describe(), runErr)
	}
	sudoErr.Kind = SudoFailed
	if len(cfg.SudoPassword) == 0 && asksForPassword(sudoErr.Stderr) {
		sudoErr.Kind = SudoPasswordRequired
	}
	return sudoErr
}

// run sends one command and waits for its reply. When ctx ends first the command is killed
// on the host and ctx's error returned.
func (s *rootShell) run(ctx context.Context, script string, stdin []byte) (shellReply, error) {
	id, reply, err := s.register()
	if err != nil {
		return shellReply{}, err
	}
	header := fmt.Sprintf("run %d %d %d\n", id, len(script), len(stdin))
	if err := s.send([]byte(header), []byte(script), stdin); err != nil {
		s.forget(id)
		return shellReply{}, err
	}
	select {
	case r := <-reply:
		return r, nil
	case <-s.done:
		return shellReply{}, s.err
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
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[0] != "@@done" {
		return 0, shellReply{}, fmt.Errorf("unexpected reply line %q", strings.TrimSpace(line))
	}
	var nums [4]uint64
	for i, f := range fields[1:] {
		if nums[i], err = strconv.ParseUint(f, 10, 63); err != nil {
			return 0, shellReply{}, fmt.Errorf("unexpected reply line %q", strings.TrimSpace(line))
		}
	}
	reply := shellReply{status: int(nums[1]), stdout: make([]byte, nums[2]), stderr: make([]byte, nums[3])}
	if _, err := io.ReadFull(r, reply.stdout); err != nil {
		return 0, shellReply{}, fmt.Errorf("read a command's output: %w", err)
	}
	if _, err := io.ReadFull(r, reply.stderr); err != nil {
		return 0, shellReply{}, fmt.Errorf("read a command's output: %w", err)
	}
	return nums[0], reply, nil
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
