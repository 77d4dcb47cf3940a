package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingSudo is fakeSudo that appends a line to the file in $SUDO_LOG at every
// invocation, as a host's journal gets one PAM line per authentication.
func countingSudo(t *testing.T) (sudo string, invocations func() int) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "sudo.log")
	script := strings.Replace(fakeSudo, "#!/bin/sh\n", "#!/bin/sh\necho invoked >> "+Quote(log)+"\n", 1)
	return script, func() int {
		data, err := os.ReadFile(log)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "invoked\n")
	}
}

func TestSudoAuthenticatesOncePerHost(t *testing.T) {
	sudo, invocations := countingSudo(t)
	h := sudoHost(t, sudo, "right pw")
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("out-%d", i)
			res, err := h.Sudo(ctx, fmt.Sprintf("cat; printf ' %s'; printf 'err-%d' >&2; exit %d", want, i, i%3), []byte("in-"+strconv.Itoa(i)))
			if i%3 != 0 {
				var exitErr *ExitError
				if !errors.As(err, &exitErr) || exitErr.Status != i%3 || exitErr.Stderr != fmt.Sprintf("err-%d", i) {
					t.Errorf("command %d: got %v, want exit status %d with its own stderr", i, err, i%3)
				}
			} else if err != nil {
				t.Errorf("command %d: %v", i, err)
			}
			if got := string(res.Stdout); got != fmt.Sprintf("in-%d %s", i, want) {
				t.Errorf("command %d: stdout %q", i, got)
			}
		}()
	}
	wg.Wait()
	if n := invocations(); n != 1 {
		t.Errorf("sudo ran %d times for 40 commands, want 1", n)
	}
}

func TestSudoRunsCommandsSideBySide(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	ctx := testContext(t)
	slow := make(chan error, 1)
	go func() {
		_, err := h.Sudo(ctx, "sleep 3", nil)
		slow <- err
	}()
	start := time.Now()
	if _, err := h.Sudo(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a quick command waited %s behind a slow one", d)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}

func TestSudoWrongPasswordIsTriedOncePerHost(t *testing.T) {
	sudo, invocations := countingSudo(t)
	h := sudoHost(t, sudo, "wrong pw")
	ctx := testContext(t)
	errs := make(chan error, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Sudo(ctx, "id -u", nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	first, repeated := 0, 0
	for err := range errs {
		var sudoErr *SudoError
		if !errors.As(err, &sudoErr) || sudoErr.Kind != SudoWrongPassword {
			t.Fatalf("got %v, want a wrong password error", err)
		}
		if sudoErr.FirstReport() {
			first++
		} else {
			repeated++
		}
	}
	if first != 1 || repeated != 19 {
		t.Errorf("%d first and %d repeated refusals, want 1 and 19", first, repeated)
	}
	if n := invocations(); n != 1 {
		t.Errorf("sudo ran %d times, want 1: a wrong password must cost one failed authentication", n)
	}
}

// A command past its deadline is killed on the host, the processes it started with it, and the
// shell goes on serving others.
func TestSudoDeadlineKillsTheCommand(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(testContext(t), 500*time.Millisecond)
	defer cancel()
	_, err := h.Sudo(ctx, "sleep 60 & echo $! > "+Quote(pidFile)+"; wait", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + pid); errors.Is(err, os.ErrNotExist) {
			break
		}
		if state, _ := os.ReadFile("/proc/" + pid + "/stat"); strings.Contains(string(state), ") Z ") {
			break // killed, waiting for its parent to reap it
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %s still runs after its deadline", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res, err := h.Sudo(testContext(t), "echo still here", nil); err != nil || string(res.Stdout) != "still here\n" {
		t.Fatalf("the shell did not serve the next command: %q %v", res.Stdout, err)
	}
}

// A daemon that a command leaves writing to its stdout must not push later replies out of step.
func TestSudoReplyFramingSurvivesStrayOutput(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	ctx := testContext(t)
	if _, err := h.Sudo(ctx, "(for i in 1 2 3 4 5 6 7 8 9 10; do echo stray; sleep 0.05; done) & echo first", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		res, err := h.Sudo(ctx, "echo "+strconv.Itoa(i), nil)
		if err != nil || string(res.Stdout) != strconv.Itoa(i)+"\n" {
			t.Fatalf("command %d: %q %v", i, res.Stdout, err)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// A shell lost with its connection is started again, on a new connection, for the next command.
func TestSudoShellRestartsAfterItsConnectionDropped(t *testing.T) {
	sudo, invocations := countingSudo(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	cfg.SudoExe = writeScript(t, sudo)
	cfg.SudoPassword = []byte("right pw")
	ctx := testContext(t)
	h, err := newTestPool(t).Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sudo(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	srv.dropConnections()
	var res Result
	for range 50 { // the client notices the drop asynchronously
		if res, err = h.Sudo(ctx, "echo back", nil); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || string(res.Stdout) != "back\n" {
		t.Fatalf("after the connection dropped: %q %v", res.Stdout, err)
	}
	if n := invocations(); n != 2 {
		t.Errorf("sudo ran %d times, want 2 (the first shell and its replacement)", n)
	}
}

// sshd refuses a session over MaxSessions and frees its slot a while after the client closed
// it; nothing ran, so the open is retried instead of failing the command.
func TestRefusedSessionOpenIsRetried(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	srv.sessionLag = 100 * time.Millisecond
	srv.sessionLimit.Store(2)
	h, err := newTestPool(t).Host(ctx, clientConfig(t, client, srv, srv))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Run(ctx, "true", nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if srv.refused.Load() == 0 {
		t.Error("the server refused no session: the test did not reach the limit")
	}
}

// Commands run as under a login shell: in /, with SIGPIPE at its default (the shell ignores it).
func TestSudoCommandsGetAnOrdinaryProcess(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	res, err := h.Sudo(testContext(t), "yes | head -n 1; pwd", nil)
	if err != nil || string(res.Stdout) != "y\n/\n" || len(res.Stderr) != 0 {
		t.Fatalf("got %q, stderr %q, %v; want y and / with nothing on stderr", res.Stdout, res.Stderr, err)
	}
}

type ctxKey struct{}

// recordingLogger keeps what the pool logged and the request each line came with.
type recordingLogger struct {
	mu     sync.Mutex
	lines  []string
	fields []map[string]any
}

func (r *recordingLogger) record(ctx context.Context, level, msg string, fields map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf("%s %s request=%v node=%v", level, msg, ctx.Value(ctxKey{}), fields["node"]))
	r.fields = append(r.fields, fields)
}

func (r *recordingLogger) Debug(ctx context.Context, msg string, fields map[string]any) {
	r.record(ctx, "DEBUG", msg, fields)
}

func (r *recordingLogger) Info(ctx context.Context, msg string, fields map[string]any) {
	r.record(ctx, "INFO", msg, fields)
}

// Each command is logged at DEBUG with the context of the request that ran it; the connection,
// the root shell and a change at INFO, once each, with the node they were made on.
func TestLogsCarryTheRequestAndTheNode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("WriteFile chowns to root: run as root")
	}
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	cfg.Name = "gpu07"
	cfg.SudoExe = writeScript(t, fakeSudo)
	cfg.SudoPassword = []byte("right pw")
	pool := newTestPool(t)
	logs := &recordingLogger{}
	pool.Logger = logs
	ctx := context.WithValue(testContext(t), ctxKey{}, "read-user-alice")
	h, err := pool.Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "slurmd")
	for range 2 {
		if _, err := h.WriteFile(ctx, File{Path: path, Content: []byte("SLURMD_OPTIONS=\n")}); err != nil {
			t.Fatal(err)
		}
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	var infos, commands int
	for _, line := range logs.lines {
		if !strings.HasSuffix(line, "request=read-user-alice node=gpu07") {
			t.Errorf("log line without the request or the node: %s", line)
		}
		if strings.HasPrefix(line, "INFO ") {
			infos++
			progress := strings.HasPrefix(line, "INFO ssh connected ") || strings.HasPrefix(line, "INFO sudo authenticated: root shell started ")
			if want := "INFO gpu07: wrote " + path + " "; !progress && !strings.HasPrefix(line, want) {
				t.Errorf("INFO line %q, want the connection, the root shell, or a line starting with %q", line, want)
			}
		}
		if strings.HasPrefix(line, "DEBUG sudo command ") {
			commands++
		}
	}
	if infos != 3 || commands != 2 {
		t.Errorf("%d INFO lines and %d commands logged, want the connection, the root shell, 1 change and 2 commands:\n%s", infos, commands, strings.Join(logs.lines, "\n"))
	}
}

// Closing the pool logs at INFO, once per connection, what the run asked of it: the commands
// that ran (root shell and plain), the reads another caller's answered, the bytes that came back
// and the time, tagged with the request that first used the connection.
func TestCloseLogsEachHostsRunSummary(t *testing.T) {
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	cfg.Name = "gpu07"
	cfg.SudoExe = writeScript(t, fakeSudo)
	cfg.SudoPassword = []byte("right pw")
	pool := newTestPool(t)
	logs := &recordingLogger{}
	pool.Logger = logs
	ctx := context.WithValue(testContext(t), ctxKey{}, "plan-node-gpu07")
	h, err := pool.Host(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	received := 0
	for _, run := range []func() (Result, error){
		func() (Result, error) { return h.Sudo(ctx, "printf abc", nil) },
		func() (Result, error) { return h.Read(ctx, "printf hello; printf err >&2") },
		func() (Result, error) { return h.Read(ctx, "printf hello; printf err >&2") },
		func() (Result, error) { return h.Run(ctx, "printf 12345", nil) },
	} {
		res, err := run()
		if err != nil {
			t.Fatal(err)
		}
		received += len(res.Stdout) + len(res.Stderr)
	}
	received -= len("helloerr") // the shared read's bytes came once
	pool.Close()

	logs.mu.Lock()
	defer logs.mu.Unlock()
	var summaries []int
	for i, line := range logs.lines {
		if strings.HasPrefix(line, "INFO ssh run summary ") {
			summaries = append(summaries, i)
		}
	}
	if len(summaries) != 1 {
		t.Fatalf("%d run summaries logged, want 1:\n%s", len(summaries), strings.Join(logs.lines, "\n"))
	}
	line, fields := logs.lines[summaries[0]], logs.fields[summaries[0]]
	if !strings.HasSuffix(line, "request=plan-node-gpu07 node=gpu07") {
		t.Errorf("summary %q lacks the request or the node", line)
	}
	want := map[string]any{"commands": 3, "shared_reads": 1, "bytes_received": received, "user": cfg.User, "address": cfg.hostPort()}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("summary field %s = %v, want %v (fields %v)", k, fields[k], v, fields)
		}
	}
	busy, _ := fields["command_ms"].(int64)
	total, _ := fields["duration_ms"].(int64)
	if busy < 0 || total < busy {
		t.Errorf("summary times command_ms=%v duration_ms=%v, want 0 <= command_ms <= duration_ms", fields["command_ms"], fields["duration_ms"])
	}
}

// TestRootShellRepliesWithSIGCHLDBlocked runs the shell's program with SIGCHLD blocked, the
// deterministic form of a SIGCHLD that arrives just before select() is entered: a shell that
// waits for the signal to reap its commands never replies, as one did in CI, where a UFW read
// on gpu02 waited out the 30-minute command timeout.
func TestRootShellRepliesWithSIGCHLDBlocked(t *testing.T) {
	blockThenExec := `use POSIX (); POSIX::sigprocmask(POSIX::SIG_BLOCK(), POSIX::SigSet->new(POSIX::SIGCHLD())) or die "sigprocmask: $!"; exec @ARGV or die "exec: $!"`
	cmd := exec.Command("perl", "-e", blockThenExec, "perl", "-e", rootShellScript, "marker")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	replies := make(chan uint64)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			id, _, err := readReply(r)
			if err != nil {
				close(replies)
				return
			}
			replies <- id
		}
	}()
	scripts := []string{"true", "exit 3", "exec >&- 2>&-; sleep 0.2", "echo out; echo err >&2"}
	for i, script := range scripts {
		id := uint64(i + 1)
		if _, err := fmt.Fprintf(stdin, "run %d %d 0\n%s", id, len(script), script); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-replies:
			if got != id {
				t.Fatalf("reply for command %d, want %d", got, id)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no reply to %q in 5 s with SIGCHLD blocked", script)
		}
	}
}

// startShellProgram runs the shell's program as sudo would and returns its stdin and its replies.
func startShellProgram(t *testing.T) (io.Writer, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command("perl", "-e", rootShellScript, "marker")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return stdin, bufio.NewReader(stdout)
}

// A kill sent right behind its command, in the same write, reaches the command and what it
// started, however early in the command's start it lands.
func TestRootShellKillRightAfterRunAlwaysKills(t *testing.T) {
	stdin, replies := startShellProgram(t)
	const tries = 200
	script := "sleep 30 & sleep 30; wait"
	var requests strings.Builder
	for id := 1; id <= tries; id++ {
		fmt.Fprintf(&requests, "run %d %d 0\n%skill %d 0 0\n", id, len(script), script, id)
	}
	if _, err := io.WriteString(stdin, requests.String()); err != nil {
		t.Fatal(err)
	}
	statuses := make(chan int, tries)
	go func() {
		defer close(statuses)
		for range tries {
			_, reply, err := readReply(replies)
			if err != nil {
				return
			}
			statuses <- reply.status
		}
	}()
	deadline := time.After(10 * time.Second)
	killed, ended := 0, 0
	for ended < tries {
		select {
		case status, ok := <-statuses:
			if !ok {
				t.Fatalf("the shell ended after %d replies", ended)
			}
			ended++
			if status == 128+9 {
				killed++
			}
		case <-deadline:
			t.Fatalf("%d of %d commands still run 10 s after their kill: it missed them", tries-ended, tries)
		}
	}
	if killed != tries {
		t.Errorf("%d of %d commands ended by KILL", killed, tries)
	}
}
