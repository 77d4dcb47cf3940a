package slurm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// sandbox is a controller in a temporary directory: the scripts run with
// this machine's sh, /etc/slurm lives under root, and systemctl, scontrol,
// slurmctld and journalctl are stubs that log their calls.
type sandbox struct {
	t      *testing.T
	root   string
	shell  transporttest.Shell
	writes []string
	// beforeWrite, when set, runs before each WriteFile: another process at work.
	beforeWrite func(path string)
}

const stubs = `#!/bin/sh
echo "$(basename "$0") $*" >> "$SANDBOX/calls"
case "$(basename "$0") $1" in
"slurmctld -V") echo "slurm-wlm 24.11.5" ;;
"systemctl is-active") [ -e "$SANDBOX/active" ] ;;
"systemctl is-enabled") if [ -e "$SANDBOX/enabled" ]; then echo enabled; else echo disabled; exit 1; fi ;;
"systemctl enable") touch "$SANDBOX/enabled" ;;
"systemctl restart"|"systemctl start") [ -e "$SANDBOX/broken" ] && grep -q Broken "$SANDBOX/etc/slurm/slurm.conf" && exit 1; touch "$SANDBOX/active" ;;
"systemctl stop") rm -f "$SANDBOX/active" ;;
"systemctl disable") [ -e "$SANDBOX/stopfails" ] && { echo "Failed to stop slurmctld.service" >&2; exit 1; }; rm -f "$SANDBOX/active" ;;
"apt-cache policy") printf 'slurmctld:\n  Installed: (none)\n  Candidate: 24.11.5-4+deb13u1\n' ;;
"scontrol ping") [ -e "$SANDBOX/active" ] && echo "Slurmctld(primary) at login01 is UP" || { echo "Slurmctld(primary) at login01 is DOWN"; exit 1; } ;;
"scontrol show") [ "$2" = node ] && { if [ $# -eq 4 ]; then grep "^NodeName=$4 " "$SANDBOX/nodes"; else cat "$SANDBOX/nodes" 2>/dev/null; fi; exit 0; }; grep -q '=invalid' "$SLURM_CONF" && { echo "scontrol: fatal: Invalid SlurmctldDebug invalid" >&2; exit 1; }; exit 0 ;;
"journalctl -u") echo "slurmctld: fatal: the stub refuses this config" ;;
"scontrol update") case "$*" in *state=undrain*) sed -i "/^NodeName=${2#nodename=} /s/+DRAIN//" "$SANDBOX/nodes" 2>/dev/null ;; esac
	[ -e "$SANDBOX/update-fails" ] && { echo "slurm_update error: Invalid node state specified" >&2; exit 1; }; exit 0 ;;
"salloc -p") echo "salloc: Granted job allocation 7" >&2 ;;
esac
`

func newSandbox(t *testing.T, active bool) *sandbox {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	for _, dir := range []string{bin, filepath.Join(root, "etc/slurm")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"systemctl", "scontrol", "slurmctld", "journalctl", "apt-cache", "salloc", "scancel"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stubs), 0o755); err != nil { //nolint:gosec // G306: the stubs must be executable.
			t.Fatal(err)
		}
	}
	if active {
		// A running slurmctld is one its package enabled at boot.
		touch(t, filepath.Join(root, "active"))
		touch(t, filepath.Join(root, "enabled"))
	}
	env := "export SANDBOX=" + root + " LC_ALL=C PATH=" + bin + ":/usr/bin:/bin\n"
	return &sandbox{t: t, root: root, shell: transporttest.Shell{Rewrite: func(script string) string {
		script = strings.ReplaceAll(script, transport.ScriptEnv, "")
		return env + strings.ReplaceAll(script, "/etc/slurm", root+"/etc/slurm")
	}}}
}

// guideSandbox is a sandbox whose slurmctld runs the guide's files.
func guideSandbox(t *testing.T) *sandbox {
	s := newSandbox(t, true)
	if _, err := apply(context.Background(), s, guideFragments(t)...); err != nil {
		t.Fatal(err)
	}
	return s
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *sandbox) Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	return s.shell.Sudo(ctx, script, stdin)
}

func (s *sandbox) Read(ctx context.Context, script string) (transport.Result, error) {
	return s.shell.Read(ctx, script)
}

// WriteFile writes as transport.Host does, conditional writes included.
func (s *sandbox) WriteFile(_ context.Context, f transport.File) (bool, error) {
	if s.beforeWrite != nil {
		s.beforeWrite(f.Path)
	}
	s.writes = append(s.writes, f.Path)
	if f.ExpectSHA256 != "" {
		cur, err := os.ReadFile(s.root + f.Path)
		found := transport.Absent
		if err == nil {
			sum := sha256.Sum256(cur)
			found = hex.EncodeToString(sum[:])
		}
		if found != f.ExpectSHA256 {
			return false, fmt.Errorf("write %s: %w", f.Path, transport.ErrWriteConflict)
		}
	}
	return true, os.WriteFile(s.root+f.Path, f.Content, 0o600)
}

func (s *sandbox) Lock(context.Context) (func(), error) { return func() {}, nil }

func (s *sandbox) read(path string) string {
	b, err := os.ReadFile(s.root + path)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// calls are the stub commands run since the last call, minus the reads.
func (s *sandbox) calls() []string {
	b, _ := os.ReadFile(filepath.Join(s.root, "calls"))
	_ = os.Remove(filepath.Join(s.root, "calls"))
	var out []string
	for _, c := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if c != "" && c != "slurmctld -V" && c != "systemctl is-active --quiet slurmctld" && c != "systemctl is-enabled slurmctld" && c != "scontrol show node -o" {
			out = append(out, c)
		}
	}
	return out
}

func guideFragments(t *testing.T) []Fragment {
	c, nodes, parts := guideExample()
	var out []Fragment
	add := func(f Fragment, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	add(ControllerFragment(c))
	for _, n := range nodes {
		add(NodeFragment(n))
	}
	add(PartitionFragment(parts[0]))
	return out
}

// testWait bounds the stub slurmctld's answer, which comes at once.
const testWait = 5 * time.Second

// apply writes changes and activates them, as one apply with one resource would.
func apply(ctx context.Context, s ControllerHost, changes ...Fragment) (Outcome, error) {
	if err := WriteFragments(ctx, s, changes...); err != nil {
		return Outcome{}, err
	}
	return Activate(ctx, s, testWait)
}

func TestApplyLifecycle(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, false)
	frags := guideFragments(t)

	// Nodes and partition before the controller: only fragments are kept, and there is
	// nothing to activate yet.
	if err := WriteFragments(ctx, s, frags[1:]...); err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	if _, err := Activate(ctx, s, testWait); !errors.As(err, &refused) || !strings.Contains(err.Error(), "nothing to activate") {
		t.Fatalf("activation without a controller fragment: %v", err)
	}
	if _, err := os.Stat(s.root + "/etc/slurm/slurm.conf"); !os.IsNotExist(err) {
		t.Fatalf("slurm.conf written without a controller: %v", err)
	}
	if got := s.calls(); len(got) > 0 {
		t.Fatalf("daemons touched before the controller: %q", got)
	}

	// The controller arrives, each resource writing its own fragment on its own: nothing
	// but fragments changes until the one activation.
	for _, f := range frags {
		if err := WriteFragments(ctx, s, f); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.calls(); len(got) > 0 {
		t.Fatalf("writing fragments touched a daemon: %q", got)
	}
	out, err := Preview(ctx, s)
	if err != nil || out.Class != RestartController || out.CurrentSHA256 != "" || out.NextSHA256 == "" {
		t.Fatalf("pending before the first activation: %+v %v", out, err)
	}
	out, err = Activate(ctx, s, testWait)
	if err != nil || out.Class != RestartController {
		t.Fatalf("first activation: %v %v", out.Class, err)
	}
	if got := s.read("/etc/slurm/slurm.conf"); got != transporttest.Testdata(t, "guide-slurm.conf") {
		t.Errorf("slurm.conf:\n%s", got)
	}
	want := []string{"scontrol show hostnames localhost", "systemctl enable --quiet slurmctld", "systemctl reset-failed slurmctld", "systemctl restart slurmctld", "scontrol ping"}
	if got := s.calls(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", got, want)
	}
	if now, err := Preview(ctx, s); err != nil || now.Class != NoChange || now.CurrentSHA256 != out.NextSHA256 {
		t.Errorf("after the activation: %+v %v, want nothing pending and the files activated", now, err)
	}

	// The same again touches nothing.
	s.writes = nil
	out, err = apply(ctx, s, frags...)
	if err != nil || out.Class != NoChange || len(s.writes) > 0 || len(s.calls()) > 0 {
		t.Errorf("no-op: %v %v, wrote %v", out.Class, err, s.writes)
	}

	// A partition change is a reconfigure.
	_, _, parts := guideExample()
	parts[0].MaxTime = "1-00:00:00"
	p, _ := PartitionFragment(parts[0])
	out, err = apply(ctx, s, p)
	if err != nil || out.Class != Reconfigure {
		t.Fatalf("partition: %v %v", out.Class, err)
	}
	if got := s.calls(); strings.Join(got, "|") != "scontrol show hostnames localhost|scontrol reconfigure|scontrol ping" {
		t.Errorf("calls %q", got)
	}

	// Removing a node is an ordered restart: stop, write, start.
	out, err = apply(ctx, s, RemoveFragment(NodeFile("gpu03")), mustPartition(t, "gpu01", "gpu02"))
	if err != nil || out.Class != OrderedRestart || strings.Join(out.RestartNodes, ",") != "gpu01,gpu02" {
		t.Fatalf("node removed: %+v %v", out, err)
	}
	if got := s.calls(); strings.Join(got, "|") != "scontrol show hostnames localhost|systemctl stop slurmctld|systemctl reset-failed slurmctld|systemctl start slurmctld|scontrol ping" {
		t.Errorf("calls %q", got)
	}
	if _, err := os.Stat(s.root + FragmentDir + "/node-gpu03.conf"); !os.IsNotExist(err) {
		t.Errorf("gpu03's fragment is still there: %v", err)
	}
	if !strings.Contains(s.read("/etc/slurm/slurm.conf"), "NodeName=gpu[01-02] ") {
		t.Errorf("slurm.conf:\n%s", s.read("/etc/slurm/slurm.conf"))
	}
}

// An apply that ends between the writes and the activation (interrupted, or -target without
// the activation) leaves the activation pending on the controller, where the next plan sees
// it; so does slurmctld stopped by hand.
func TestPendingActivation(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	if err := WriteFragments(ctx, s, RemoveFragment(NodeFile("gpu03")), mustPartition(t, "gpu01", "gpu02")); err != nil {
		t.Fatal(err)
	}
	out, err := Preview(ctx, s)
	if err != nil || out.Class != OrderedRestart || out.CurrentSHA256 == out.NextSHA256 ||
		strings.Join(out.Reasons, "|") != "node gpu03 added, removed or changed|partition gpu changed" {
		t.Fatalf("pending: %+v %v", out, err)
	}
	if _, err := Activate(ctx, s, testWait); err != nil {
		t.Fatal(err)
	}
	if err := ClearPendingRestart(ctx, s, []string{"gpu01", "gpu02"}); err != nil {
		t.Fatal(err)
	}
	s.calls()
	if err := os.Remove(filepath.Join(s.root, "active")); err != nil {
		t.Fatal(err)
	}
	out, err = Preview(ctx, s)
	if err != nil || out.Class != RestartController || strings.Join(out.Reasons, "|") != NotRunningReason {
		t.Fatalf("stopped by hand: %+v %v", out, err)
	}
	if _, err := Activate(ctx, s, testWait); err != nil {
		t.Fatal(err)
	}
	// The first activation enabled slurmctld: this start leaves systemctl enable out, which on
	// Debian runs update-rc.d and reloads systemd even for an enabled unit.
	want := "systemctl reset-failed slurmctld|systemctl restart slurmctld|scontrol ping"
	if got := strings.Join(s.calls(), "|"); got != want {
		t.Errorf("calls %q, want %q: started, nothing written, not enabled again", got, want)
	}
}

// mustPartition is the guide's partition fragment listing nodes.
func mustPartition(t *testing.T, nodes ...string) Fragment {
	return guidePartition(t, func(p *PartitionDef) { p.Nodes = nodes })
}

// guidePartition is the guide's partition fragment with edit applied.
func guidePartition(t *testing.T, edit func(*PartitionDef)) Fragment {
	_, _, parts := guideExample()
	edit(&parts[0])
	f, err := PartitionFragment(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestApplyRefusals(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	before := s.read("/etc/slurm/slurm.conf")
	s.calls()
	c := DefaultControllerSettings("login01")
	tests := []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"P2", map[string]string{"AccountingStorageTRES": "gres/gpu"}, "slurmdbd is required"},
		{"unknown to 24.11", map[string]string{"MetricsType": "metrics/openmetrics"}, "added in Slurm 25.11"},
		{"parser", map[string]string{"SlurmctldDebug": "invalid"}, "does not pass Slurm's parser, nothing was changed: local: command exited with status 1: scontrol: fatal: Invalid SlurmctldDebug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.Extra = tt.extra
			f, err := ControllerFragment(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = apply(ctx, s, f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Errorf("err = %T, want a *RefusedError: nothing was written", err)
			}
			if s.read("/etc/slurm/slurm.conf") != before {
				t.Error("slurm.conf changed")
			}
			for _, call := range s.calls() {
				if !strings.HasPrefix(call, "scontrol show") {
					t.Errorf("daemon touched: %s", call)
				}
			}
		})
	}
	if err := WriteFragments(ctx, s, Fragment{File: "../x.conf", Content: []byte("kind=node\n")}); err == nil {
		t.Error("a fragment name outside the pattern was accepted")
	}
}

func TestApplyRollback(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	before := s.read("/etc/slurm/slurm.conf")
	s.calls()
	// The stub's slurmctld does not start with a ClusterName containing
	// "Broken", which its parser check accepts: the restart fails.
	touch(t, filepath.Join(s.root, "broken"))
	c, _, _ := guideExample()
	c.ClusterName = "Broken"
	f, _ := ControllerFragment(c)
	_, err := apply(ctx, s, f)
	if err == nil || !strings.Contains(err.Error(), "the stub refuses this config") || !strings.Contains(err.Error(), "previous files were restored") {
		t.Fatalf("err = %v", err)
	}
	var activation *ActivationError
	if !errors.As(err, &activation) || activation.RestoreErr != nil || !activation.WasActive {
		t.Errorf("err = %#v, want an *ActivationError with the files restored", err)
	}
	if s.read("/etc/slurm/slurm.conf") != before {
		t.Error("the previous files were not restored")
	}
	want := "scontrol show hostnames localhost|systemctl reset-failed slurmctld|systemctl restart slurmctld|journalctl -u slurmctld -n 30 --no-pager -o short-iso|" +
		"systemctl reset-failed slurmctld|systemctl restart slurmctld|scontrol ping"
	if got := strings.Join(s.calls(), "|"); got != want {
		t.Errorf("calls %q\nwant  %q", got, want)
	}
	// The fragment stays as the resource wrote it: the activation is still pending.
	if out, err := Preview(ctx, s); err != nil || out.Class != RestartController || strings.Join(out.Reasons, "|") != "ClusterName changed" {
		t.Errorf("after the rollback: %+v %v, want the activation still pending", out, err)
	}
}

// A partition naming an undefined node is refused with a typed error the provider can tell
// from the others (P14).
func TestApplyUndefinedNode(t *testing.T) {
	s := guideSandbox(t)
	_, err := apply(context.Background(), s, mustPartition(t, "gpu01", "gpu09"))
	var undefined *UndefinedNodesError
	var refused *RefusedError
	if !errors.As(err, &undefined) || !errors.As(err, &refused) || strings.Join(undefined.Nodes, ",") != "gpu09" {
		t.Errorf("err = %#v", err)
	}
}

// cancelOnStop is a controller whose apply is cancelled (Ctrl-C) right after slurmctld
// was stopped for an ordered restart.
type cancelOnStop struct {
	*sandbox
	cancel context.CancelFunc
}

func (c cancelOnStop) Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error) {
	res, err := c.sandbox.Sudo(ctx, script, stdin)
	if strings.Contains(script, "systemctl stop slurmctld") {
		c.cancel()
	}
	return res, err
}

func TestApplyCancelledAfterStop(t *testing.T) {
	s := guideSandbox(t)
	if err := WriteFragments(context.Background(), s, RemoveFragment(NodeFile("gpu03")), mustPartition(t, "gpu01", "gpu02")); err != nil {
		t.Fatal(err)
	}
	s.calls()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := Activate(ctx, cancelOnStop{s, cancel}, testWait)
	if err != nil || out.Class != OrderedRestart {
		t.Fatalf("cancelled ordered restart: %v %v", out.Class, err)
	}
	if _, err := os.Stat(filepath.Join(s.root, "active")); err != nil {
		t.Error("slurmctld was left stopped")
	}
	if !strings.Contains(s.read("/etc/slurm/slurm.conf"), "NodeName=gpu[01-02] ") {
		t.Error("the new slurm.conf was not written to the end")
	}
	want := "scontrol show hostnames localhost|systemctl stop slurmctld|systemctl reset-failed slurmctld|systemctl start slurmctld|scontrol ping"
	if got := strings.Join(s.calls(), "|"); got != want {
		t.Errorf("calls %q\nwant  %q", got, want)
	}
}

// Another Terraform run changes a partition between this activation's read and its write of
// slurm.conf: the conditional write notices, and the activation starts over from the files
// as they are, so slurm.conf ends with both changes.
func TestApplyConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	theirs := guidePartition(t, func(p *PartitionDef) { p.MaxTime = "1-00:00:00" })
	s.beforeWrite = func(path string) {
		if path != ConfDir+"/slurm.conf" {
			return
		}
		s.beforeWrite = nil
		if err := os.WriteFile(s.root+FragmentDir+"/"+theirs.File, theirs.Content, 0o600); err != nil {
			t.Fatal(err)
		}
		conf := strings.Replace(s.read("/etc/slurm/slurm.conf"), "MaxTime=3-00:00:00", "MaxTime=1-00:00:00", 1)
		if err := os.WriteFile(s.root+"/etc/slurm/slurm.conf", []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, _, _ := guideExample()
	c.SchedulerType = "sched/builtin"
	mine, err := ControllerFragment(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apply(ctx, s, mine); err != nil {
		t.Fatal(err)
	}
	conf := s.read("/etc/slurm/slurm.conf")
	if !strings.Contains(conf, "SchedulerType=sched/builtin") || !strings.Contains(conf, "MaxTime=1-00:00:00") {
		t.Errorf("a change was lost:\n%s", conf)
	}
	if out, err := Preview(ctx, s); err != nil || out.Class != NoChange {
		t.Errorf("after the retry: %+v %v", out, err)
	}
}

// An ordered restart records the slurmd restarts it asks for until they are cleared: a
// restart that failed is pending, and the next activation asks for it again.
func TestApplyPendingRestart(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	changes := []Fragment{RemoveFragment(NodeFile("gpu03")), mustPartition(t, "gpu01", "gpu02")}
	if out, err := apply(ctx, s, changes...); err != nil || strings.Join(out.RestartNodes, ",") != "gpu01,gpu02" {
		t.Fatalf("ordered restart: %+v %v", out, err)
	}
	// The restart of slurmd failed: nothing cleared it.
	out, err := Preview(ctx, s)
	if err != nil || out.Class != NoChange || strings.Join(out.RestartNodes, ",") != "gpu01,gpu02" ||
		strings.Join(out.Reasons, "|") != "slurmd restart still due on gpu[01-02] since an earlier ordered restart" {
		t.Fatalf("pending %+v %v", out, err)
	}
	s.calls()
	out, err = apply(ctx, s, changes...)
	if err != nil || out.Class != NoChange || strings.Join(out.RestartNodes, ",") != "gpu01,gpu02" || len(s.calls()) > 0 {
		t.Fatalf("retry: %+v %v, want the restarts asked for again and slurmctld left alone", out, err)
	}
	if err := ClearPendingRestart(ctx, s, []string{"gpu01"}); err != nil {
		t.Fatal(err)
	}
	if out, err := Preview(ctx, s, changes...); err != nil || strings.Join(out.RestartNodes, ",") != "gpu02" {
		t.Fatalf("after gpu01 restarted: %+v %v", out, err)
	}
	if err := ClearPendingRestart(ctx, s, []string{"gpu02"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.root + pendingFile); !os.IsNotExist(err) {
		t.Errorf("the list of pending restarts is still there: %v", err)
	}
	if out, err := Preview(ctx, s); err != nil || out.Class != NoChange || len(out.Reasons) > 0 {
		t.Errorf("after both restarted: %+v %v", out, err)
	}
}

// Before slurmctld is installed, the plan checks settings against the version apt would
// install, so the first apply does not install packages only to fail then.
func TestPreviewGatesOnCandidateVersion(t *testing.T) {
	s := newSandbox(t, false)
	if err := os.Remove(filepath.Join(s.root, "bin", "slurmctld")); err != nil {
		t.Fatal(err)
	}
	c := DefaultControllerSettings("login01")
	c.Extra = map[string]string{"MetricsType": "metrics/openmetrics"}
	f, err := ControllerFragment(c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Preview(context.Background(), s, f)
	if err == nil || !strings.Contains(err.Error(), "apt would install Slurm 24.11.5") || !strings.Contains(err.Error(), "added in Slurm 25.11") {
		t.Errorf("err = %v", err)
	}
	c.Extra = nil
	f, _ = ControllerFragment(c)
	if _, err := Preview(context.Background(), s, f); err != nil {
		t.Errorf("the guide's settings: %v", err)
	}
}

func TestParseCandidate(t *testing.T) {
	for in, want := range map[string]string{"24.11.5-4+deb13u1": "24.11.5", "1:25.11.0-1": "25.11.0", "(none)": "", "": ""} {
		var lines []string
		if in != "" {
			lines = []string{in}
		}
		got := ""
		if v := parseCandidate(lines); v != nil {
			got = v.String()
		}
		if got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestStopController(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	touch(t, filepath.Join(s.root, "stopfails"))
	if err := StopController(ctx, s); err == nil || !strings.Contains(err.Error(), "Failed to stop") {
		t.Errorf("a failed stop: %v", err)
	}
	if err := os.Remove(filepath.Join(s.root, "stopfails")); err != nil {
		t.Fatal(err)
	}
	if err := StopController(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.root, "active")); err == nil {
		t.Error("slurmctld still runs")
	}
	if _, err := os.Stat(s.root + "/etc/slurm/slurm.conf"); !os.IsNotExist(err) {
		t.Errorf("slurm.conf is still there: %v", err)
	}
	// Without slurmctld there is nothing to stop.
	touch(t, filepath.Join(s.root, "stopfails"))
	if err := os.Remove(filepath.Join(s.root, "bin", "slurmctld")); err != nil {
		t.Fatal(err)
	}
	if err := StopController(ctx, s); err != nil {
		t.Errorf("no slurmctld: %v", err)
	}
}

// Fragments come back byte for byte, blank lines, a missing last newline and bytes that are
// not text included, from one process; a fragment that cannot be read fails the read.
func TestReadFragmentsExactly(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, false)
	dir := s.root + FragmentDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	want := map[string][]byte{
		"node-gpu01.conf":    []byte("NodeName=gpu01 CPUs=8\n\n# after a blank line, no newline at the end"),
		"empty.conf":         {},
		"every-byte.conf":    all,
		"partition-gpu.conf": []byte("PartitionName=gpu Nodes=gpu01\n"),
	}
	for name, content := range want {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	touch(t, filepath.Join(dir, ".pending-restart"))
	_, onDisk, err := readFragments(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != len(want) {
		t.Errorf("read %d fragments, want %d: %q", len(onDisk), len(want), onDisk)
	}
	for name, content := range want {
		if got, ok := onDisk[name]; !ok || !bytes.Equal(got, content) {
			t.Errorf("%s: read %q (%v), want %q", name, got, ok, content)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "unreadable.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readFragments(ctx, s); err == nil || !strings.Contains(err.Error(), "fragment unreadable.conf: it cannot be read") {
		t.Errorf("a fragment that cannot be read: %v", err)
	}
}
