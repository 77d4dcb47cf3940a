package slurm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// Lines as Slurm 24.11's `scontrol show node -o` prints them on the lab, shortened.
const (
	drainedLine = "NodeName=gpu02 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 Gres=gpu:4 OS=Linux 6.18 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=24105 State=IDLE+DRAIN ThreadsPerCore=1 Partitions=gpu  CfgTRES=cpu=2 AllocTRES= CurrentWatts=0 AveWatts=0  Reason=GPU driver update [root@2026-12-01T14:23:47]"
	// After a resume the reason stays until the node answers again.
	resumedLine  = "NodeName=gpu02 Arch=x86_64 State=IDLE+NOT_RESPONDING ThreadsPerCore=1 AveWatts=0  Reason=GPU driver update [root@2026-12-01T14:23:47]"
	drainingLine = "NodeName=gpu01 Arch=x86_64 State=MIXED+DRAIN ThreadsPerCore=1 AveWatts=0  Reason=maint=yes (ticket 42) [admin@2026-12-01T14:23:47]"
	idleLine     = "NodeName=gpu03 Arch=x86_64 State=IDLE ThreadsPerCore=1 AveWatts=0 "
)

func TestParseNodeRuntimes(t *testing.T) {
	got := parseNodeRuntimes(transport.Section{Lines: []string{drainedLine, drainingLine, idleLine}})
	want := map[string]NodeRuntime{
		"gpu02": {State: "IDLE+DRAIN", Drained: true, Reason: "GPU driver update"},
		"gpu01": {State: "MIXED+DRAIN", Drained: true, Reason: "maint=yes (ticket 42)"},
		"gpu03": {State: "IDLE"},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %+v, want %+v", name, got[name], w)
		}
	}
	if rt := parseNodeRuntimes(transport.Section{Lines: []string{resumedLine}})["gpu02"]; rt.Drained || rt.DeclaredDrain() != "" {
		t.Errorf("resumed node: %+v reads as drained", rt)
	}
	if parseNodeRuntimes(transport.Section{Status: 1, Lines: []string{"slurm_load_node error: Unable to contact slurm controller"}}) != nil {
		t.Error("a controller that does not answer must give no runtime at all")
	}
}

func TestNodeStateChanges(t *testing.T) {
	nodes := []NodeDef{
		{Name: "gpu01", DrainReason: "maint=yes (ticket 42)"}, // drained as declared
		{Name: "gpu02", DrainReason: "GPU driver update"},     // resumed by hand
		{Name: "gpu03"},                         // drained by hand
		{Name: "gpu04", DrainReason: "new"},     // not known to slurmctld yet
		{Name: "gpu05"},                         // not known, nothing declared
		{Name: "gpu06", DrainReason: "changed"}, // drained for another reason
	}
	runtime := map[string]NodeRuntime{
		"gpu01": {Drained: true, Reason: "maint=yes (ticket 42)"},
		"gpu02": {Reason: "GPU driver update"},
		"gpu03": {Drained: true, Reason: "by hand"},
		"gpu06": {Drained: true, Reason: "old"},
	}
	var got []string
	for _, c := range nodeStateChanges(nodes, runtime) {
		got = append(got, c.String())
	}
	want := "drain gpu02 (GPU driver update)|resume gpu03|drain gpu04 (new)|drain gpu06 (changed)"
	if strings.Join(got, "|") != want {
		t.Errorf("changes %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestCheckDrainReason(t *testing.T) {
	for _, ok := range []string{"", "GPU driver update", "maint=yes (ticket 42)", "x"} {
		if err := CheckDrainReason(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{" lead", "trail ", "new\nline", "quote'", `dq"`, "stamp [a@b]", "$(reboot)", "back`tick`", strings.Repeat("x", 201)} {
		if err := CheckDrainReason(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := NodeFragment(NodeDef{Name: "gpu01", DrainReason: "a\nkind=partition"}); err == nil {
		t.Error("a reason that would add a fragment line was accepted")
	}
}

// A drain reason travels in the node's fragment, not in slurm.conf, and reads back.
func TestDrainReasonFragment(t *testing.T) {
	_, nodes, _ := guideExample()
	n := nodes[0]
	n.DrainReason = "GPU driver update"
	f, err := NodeFragment(n)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseNodeFragment(f.Content)
	if err != nil || back.DrainReason != n.DrainReason {
		t.Fatalf("read back %+v %v", back, err)
	}
	drained := RenderSlurmConf(DefaultControllerSettings("login01"), []NodeDef{n}, nil)
	plain := RenderSlurmConf(DefaultControllerSettings("login01"), nodes[:1], nil)
	if !bytes.Equal(drained, plain) {
		t.Errorf("a drain changed slurm.conf:\n%s", drained)
	}
}

// SetNodeStates drains and resumes with scontrol update, only where the runtime differs. A
// resumed node that keeps its reason (no accounting storage) gets an allocation that runs
// nothing, cancelled at once: only an allocation makes slurmctld drop the reason.
func TestSetNodeStates(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, true)
	frags := guideFragments(t)
	if _, err := apply(ctx, s, frags...); err != nil {
		t.Fatal(err)
	}
	_, nodes, _ := guideExample()
	n := nodes[1]
	n.DrainReason = "GPU driver update"
	f, err := NodeFragment(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFragments(ctx, s, f); err != nil {
		t.Fatal(err)
	}
	lines := "NodeName=gpu01 State=IDLE \nNodeName=gpu02 State=IDLE \nNodeName=gpu03 State=MIXED+DRAIN Partitions=gpu Reason=by hand [root@2026-12-01T14:00:00]\n"
	if err := os.WriteFile(s.root+"/nodes", []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := Preview(ctx, s)
	if err != nil || out.Class != NoChange || len(out.NodeStates) != 2 {
		t.Fatalf("preview %+v %v, want a drain and a resume and no file change", out, err)
	}
	s.calls()
	done, err := SetNodeStates(ctx, s)
	if err != nil || len(done) != 2 {
		t.Fatalf("set: %v %v", done, err)
	}
	want := "scontrol update nodename=gpu01 state=drain reason=GPU driver update|scontrol update nodename=gpu03 state=undrain|scontrol show node -o gpu03|" +
		"salloc -p gpu -w gpu03 -N1 -n1 -t 1 --immediate=20 --no-shell -J gpucluster-clear-reason|scancel 7"
	if got := strings.Join(s.calls(), "|"); got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if err := os.Remove(s.root + "/active"); err != nil {
		t.Fatal(err)
	}
	if _, err := SetNodeStates(ctx, s); err == nil {
		t.Error("a drain with slurmctld down was not an error")
	}
}

// Debian's plugstack.conf, and only that exact file, is replaced; an edited one is left alone.
func TestQuietPlugstack(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, true)
	path := s.root + PlugstackPath
	if err := QuietPlugstack(ctx, s); err != nil || len(s.writes) > 0 {
		t.Fatalf("no plugstack.conf: %v, wrote %v", err, s.writes)
	}
	if err := os.WriteFile(path, []byte(debianPlugstack), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := ReadStatus(ctx, s); err != nil || !st.DebianPlugstack {
		t.Fatalf("Debian's file not recognised: %+v %v", st, err)
	}
	if err := QuietPlugstack(ctx, s); err != nil || s.read(PlugstackPath) != quietPlugstack {
		t.Fatalf("Debian's file not replaced: %v %q", err, s.read(PlugstackPath))
	}
	if st, err := ReadStatus(ctx, s); err != nil || st.DebianPlugstack {
		t.Fatalf("replaced file still reads as Debian's: %+v %v", st, err)
	}
	edited := "required /usr/lib/x86_64-linux-gnu/slurm/spank_pyxis.so\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	s.writes = nil
	if err := QuietPlugstack(ctx, s); err != nil || len(s.writes) > 0 || s.read(PlugstackPath) != edited {
		t.Fatalf("an edited file was touched: %v %v", err, s.writes)
	}
}

// A node to be removed is drained unless it is already, and its jobs are awaited; jobs still
// running after the wait are a typed error naming them.
func TestDrainForRemoval(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{Stdout: "drained\n"},
		{Stdout: "12\n13\n"},
		{Stdout: "13\n"},
		{},
	}}
	if err := DrainForRemoval(context.Background(), fake, "gpu02", time.Minute); err != nil {
		t.Fatal(err)
	}
	if s := fake.Calls[0].Script; !strings.Contains(s, "n=gpu02\nreason='"+RemovalReason+"'\n") || !strings.HasSuffix(s, drainForRemoval) {
		t.Errorf("drain script: %q", s)
	}
	if s := fake.Calls[1].Script; !strings.Contains(s, "n=gpu02\n") || !strings.HasSuffix(s, jobsOnText) {
		t.Errorf("jobs script: %q", s)
	}
	busy := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}, {Stdout: "12\n"}}}
	var running *JobsRunningError
	if err := DrainForRemoval(context.Background(), busy, "gpu02", 0); !errors.As(err, &running) || strings.Join(running.Jobs, ",") != "12" {
		t.Errorf("jobs running, no wait: %v", err)
	}
	if err := DrainForRemoval(context.Background(), busy, "gpu02;x", 0); err == nil {
		t.Error("a bad node name was accepted")
	}
}

// Slurm clears the drain of a node that has not registered yet (UNKNOWN+DRAIN) and still
// answers "Invalid node state specified": the resume counts as done once the drain is gone,
// and as failed while it stays.
func TestSetNodeStatesUnregisteredNode(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	touch(t, s.root+"/update-fails")
	lines := "NodeName=gpu01 State=UNKNOWN+DRAIN Reason=removed [root@2026-12-01T14:00:00]\nNodeName=gpu02 State=IDLE \nNodeName=gpu03 State=IDLE \n"
	if err := os.WriteFile(s.root+"/nodes", []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if done, err := SetNodeStates(ctx, s); err != nil || len(done) != 1 || done[0].String() != "resume gpu01" {
		t.Fatalf("resume of an unregistered node: %v %v", done, err)
	}
	// A drain that stays after the error is a failure.
	lines = "NodeName=gpu01 State=IDLE+DRAIN Reason=x [root@2026-12-01T14:00:00]\nNodeName=gpu02 State=IDLE \nNodeName=gpu03 State=IDLE \n"
	if err := os.WriteFile(s.root+"/nodes", []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.root+"/bin/sed", []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil { //nolint:gosec // G306: a stub that must be executable.
		t.Fatal(err)
	}
	if _, err := SetNodeStates(ctx, s); err == nil || !strings.Contains(err.Error(), "Invalid node state specified") {
		t.Errorf("a drain that stayed: %v", err)
	}
}
