package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
)

// The advice of a failed step, which assumes the step ran to its end: never the words of work
// cut short.
var stepAdviceOnHosts = []string{"/etc/passwd", "Fix the setting the message names", "repair a line edited by hand", "Cannot Create User"}

// A connection to gpu01 cut while useradd runs there for two users is reported as what it is:
// the connection to gpu01 lost while creating a user, the change maybe partly applied there, the
// node to check and the apply to run again; none of the advice of a useradd that failed. The
// other user's error is one line that points back to it.
func TestAccCutShort_connectionLostDuringCreate(t *testing.T) {
	l := lab.Require(t)
	tf := newTerraformCLI(t)
	tf.write("main.tf", cliRequiredProviders+twoUsersConfig(l, "tacc_cut", 1141))
	held := holdCommand(t, l, "gpu01", "/usr/sbin/useradd")
	t.Cleanup(func() { removeTestUsers(l, []string{"tacc_cut1", "tacc_cut2"}, "login01", "gpu01") })

	apply := tf.start("apply", "-auto-approve")
	held.waitStarted(apply, 2)
	// The provider's login on gpu01 is the one process of admin's there: its sshd session.
	onHost(t, l, "gpu01", "pkill -KILL -u "+l.AdminUser)
	held.release()
	out := apply.wait(1)

	assertCutShort(t, out, "Connection To gpu01 Lost While Creating tacc_cut", "may be partly applied on gpu01", "Check that gpu01 is up", "run the same apply again")
	assertOnceInFull(t, out, "before this step finished on node gpu01.", "Not finished on node gpu01: the connection to gpu01 was lost.")
}

// Ctrl-C during the creation of two users is reported as an interrupted apply, once in full for
// gpu01 and once in one line, and the commands in flight are killed on the node: the held
// useradds never create the accounts.
func TestAccCutShort_interruptedApply(t *testing.T) {
	l := lab.Require(t)
	tf := newTerraformCLI(t)
	tf.write("main.tf", cliRequiredProviders+twoUsersConfig(l, "tacc_int", 1151))
	held := holdCommand(t, l, "gpu01", "/usr/sbin/useradd")
	t.Cleanup(func() { removeTestUsers(l, []string{"tacc_int1", "tacc_int2"}, "login01", "gpu01") })

	apply := tf.start("apply", "-auto-approve")
	held.waitStarted(apply, 2)
	if err := apply.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	out := apply.wait(1)
	held.waitGone()
	held.release()

	assertCutShort(t, out, "Apply Interrupted", "may be partly applied on gpu01", "killed there", "Run the same apply again")
	assertOnceInFull(t, out, "before this step finished on node gpu01.", "Not finished on node gpu01: the run was interrupted.")
	for _, name := range []string{"tacc_int1", "tacc_int2"} {
		if _, _, err := l.Exec(context.Background(), "gpu01", "getent passwd "+name); err == nil {
			t.Errorf("gpu01: %s exists: the interrupted useradd was not killed", name)
		}
	}
}

// twoUsersConfig declares users prefix1 and prefix2 on login01 and gpu01.
func twoUsersConfig(l *lab.Lab, prefix string, uid int) string {
	var b strings.Builder
	b.WriteString(providerConfig(l, ""))
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, `
resource "gpucluster_user" "u%[1]d" {
  name    = "%[2]s%[1]d"
  uid     = %[3]d
  group   = "users"
  nodes   = ["login01", "gpu01"]
  home_on = "login01"
}
`, i, prefix, uid+i-1)
	}
	return b.String()
}

// assertOnceInFull checks that gpu01's cause is explained in full once (full ends the first
// sentence of that explanation) and given once more as the one-line pointer back to it. Other
// nodes may have had a command in flight too (useradd waits for another's lock of /etc/passwd).
func assertOnceInFull(t *testing.T, out, full, short string) {
	t.Helper()
	words := strings.Join(strings.Fields(out), " ")
	if n := strings.Count(words, full); n != 1 {
		t.Errorf("the full detail %q given %d times, want once", full, n)
	}
	if n := strings.Count(words, short); n != 1 {
		t.Errorf("the one-line detail %q given %d times, want once", short, n)
	}
	if t.Failed() {
		t.Logf("terraform's output:\n%s", out)
	}
}

func assertCutShort(t *testing.T, out string, want ...string) {
	t.Helper()
	// Terraform wraps a diagnostic's lines at its own width.
	words := strings.Join(strings.Fields(out), " ")
	for _, w := range want {
		if !strings.Contains(words, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	for _, a := range stepAdviceOnHosts {
		if strings.Contains(words, a) {
			t.Errorf("output gives a failed step's advice %q", a)
		}
	}
	if t.Failed() {
		t.Logf("terraform's output:\n%s", out)
	}
}

// heldCommand is a command on a lab host replaced by a stand-in that marks its start and waits
// for the test to release it before it runs the real one, so the test can cut the provider
// short at a chosen point without guessing how long anything takes.
type heldCommand struct {
	t                     *testing.T
	l                     *lab.Lab
	host, started, letRun string
}

func holdCommand(t *testing.T, l *lab.Lab, host, path string) *heldCommand {
	t.Helper()
	h := &heldCommand{t: t, l: l, host: host, started: "/run/gpucluster-test-held", letRun: "/run/gpucluster-test-release"}
	real := path + ".gpucluster-test-real"
	onHost(t, l, host, fmt.Sprintf(`rm -f %[3]s %[4]s && mv %[1]s %[2]s && cat > %[1]s <<'EOF' && chmod 755 %[1]s
#!/bin/sh
echo $$ >> %[3]s
while [ ! -e %[4]s ]; do sleep 0.05; done
exec %[2]s "$@"
EOF`, path, real, h.started, h.letRun))
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), host, fmt.Sprintf("mv %s %s; rm -f %s %s", real, path, h.started, h.letRun))
	})
	return h
}

// waitStarted waits until the provider runs the command n times at once, and fails if the
// apply ends first.
func (h *heldCommand) waitStarted(apply *runningTerraform, n int) {
	h.t.Helper()
	h.poll(fmt.Sprintf("the provider to run the held command %d times", n), fmt.Sprintf("test \"$(wc -l < %s)\" -ge %d", h.started, n), apply)
}

// waitGone waits until no held command runs.
func (h *heldCommand) waitGone() {
	h.t.Helper()
	h.poll("the held commands to end", "for p in $(cat "+h.started+"); do ! kill -0 $p 2>/dev/null || exit 1; done", nil)
}

func (h *heldCommand) release() {
	h.t.Helper()
	onHost(h.t, h.l, h.host, "touch "+h.letRun)
}

func (h *heldCommand) poll(what, script string, apply *runningTerraform) {
	h.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, _, err := h.l.Exec(context.Background(), h.host, script); err == nil {
			return
		}
		if apply != nil && apply.exited() {
			h.t.Fatalf("terraform ended before %s:\n%s", what, apply.output())
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: waited 3 minutes for %s", h.host, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// removeTestUsers removes what a test's cut-short creates may have left on the nodes: the
// accounts, their homes and their ownership records, which the test's working directory, gone
// with it, was the owner of.
func removeTestUsers(l *lab.Lab, names []string, nodes ...string) {
	for _, n := range nodes {
		for _, name := range names {
			_, _, _ = l.Exec(context.Background(), n, "userdel "+name+" 2>/dev/null; rm -rf /home/"+name+" "+ownership.Dir+"/user/"+name)
		}
	}
}

// runningTerraform is a terraform command started in the background.
type runningTerraform struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

func (tf *terraformCLI) start(args ...string) *runningTerraform {
	tf.t.Helper()
	cmd := tf.command(args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tf.t.Fatal(err)
	}
	r := &runningTerraform{t: tf.t, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	tf.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}

func (r *runningTerraform) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *runningTerraform) output() string { return r.out.String() }

// wait waits for terraform to exit with want and returns its output.
func (r *runningTerraform) wait(want int) string {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(5 * time.Minute):
		r.t.Fatalf("terraform still runs after 5 minutes:\n%s", r.output())
	}
	status := 0
	var exit *exec.ExitError
	if errors.As(r.err, &exit) {
		status = exit.ExitCode()
	} else if r.err != nil {
		r.t.Fatal(r.err)
	}
	if status != want {
		r.t.Fatalf("terraform exited %d, want %d:\n%s", status, want, r.output())
	}
	return r.output()
}

// lockedBuffer is terraform's output, read while terraform writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
