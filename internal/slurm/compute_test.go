package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestSlurmdDefaults(t *testing.T) {
	got, err := SlurmdDefaults("login01", 6817)
	if err != nil || string(got) != "SLURMD_OPTIONS=\"--conf-server login01:6817\"\n" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []struct {
		host string
		port int
	}{{"login01; rm -rf /", 6817}, {"", 6817}, {"login01", 0}, {"login01", 70000}} {
		if _, err := SlurmdDefaults(bad.host, bad.port); err == nil {
			t.Errorf("SlurmdDefaults(%q, %d): want an error", bad.host, bad.port)
		}
	}
}

func TestWaitNodeReady(t *testing.T) {
	// scontrol knows every defined node, in a partition or not (sinfo lists only those in one).
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{Err: &transport.ExitError{Host: "login01", Status: 1, Stderr: "slurm_load_node error: Unable to contact slurm controller"}},
		{Err: &transport.ExitError{Host: "login01", Status: 1, Stderr: "Node gpu03 not found"}},
		{Stdout: "NodeName=gpu03 CoresPerSocket=1 CPUAlloc=0 State=UNKNOWN+NOT_RESPONDING ThreadsPerCore=1\n"},
		{Stdout: "NodeName=gpu03 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 Reason=Low_RealMemory\n"},
		{Stdout: "NodeName=gpu03 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE ThreadsPerCore=1 TmpDisk=0\n"},
	}}
	state, err := WaitNodeReady(context.Background(), fake, "gpu03", time.Minute)
	if err != nil || state != "idle" {
		t.Fatalf("got %q, %v", state, err)
	}
	if len(fake.Calls) != 5 || !strings.Contains(fake.Calls[0].Script, "n=gpu03\n") {
		t.Errorf("scripts: %q", fake.Scripts())
	}
}

// One definition of a usable state for sinfo's and scontrol's forms.
func TestScontrolNodeState(t *testing.T) {
	for out, want := range map[string]string{
		"NodeName=a State=IDLE X=1": "idle", "NodeName=a State=MIXED": "mixed", "NodeName=a State=ALLOCATED+COMPLETING": "completing",
		"NodeName=a State=IDLE+DRAIN": "idle+drain", "NodeName=a State=DOWN*+NOT_RESPONDING": "down*+not_responding",
		"NodeName=a State=IDLE*+COMPLETING": "idle*+completing",
	} {
		got, ok := scontrolNodeState(out)
		if !ok || got != want {
			t.Errorf("%q: %q, want %q", out, got, want)
		}
		if Usable(got) != (want == "idle" || want == "mixed" || want == "completing") {
			t.Errorf("Usable(%q) = %v", got, Usable(got))
		}
	}
}

func TestWaitNodeReadyGivesUp(t *testing.T) {
	replies := make([]transporttest.Reply, 50)
	for i := range replies {
		replies[i] = transporttest.Reply{Stdout: "NodeName=gpu03 State=IDLE+DRAIN Reason=x\n"}
	}
	fake := &transporttest.Fake{T: t, Replies: replies}
	_, err := WaitNodeReady(context.Background(), fake, "gpu03", 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "node gpu03 is idle+drain") || !errors.Is(err, errNotYet) {
		t.Errorf("err = %v", err)
	}
	if _, err := WaitNodeReady(context.Background(), fake, "gpu03;x", time.Second); err == nil {
		t.Error("a bad node name was accepted")
	}
}

// A drain the node's fragment declares (drain_reason) is the wanted state: the node counts as
// registered once it is idle or mixed apart from the drain, never while it does not respond.
func TestWaitNodeReadyDeclaredDrain(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{Stdout: "NodeName=gpu03 State=IDLE+DRAIN+NOT_RESPONDING Reason=maint\n" + declaredDrainMarker + "\n"},
		{Stdout: "NodeName=gpu03 State=MIXED+DRAIN Reason=maint\n" + declaredDrainMarker + "\n"},
	}}
	state, err := WaitNodeReady(context.Background(), fake, "gpu03", time.Minute)
	if err != nil || state != "mixed+drain" {
		t.Fatalf("got %q, %v", state, err)
	}
	if !strings.Contains(fake.Calls[0].Script, "f=/etc/slurm/gpucluster.d/node-gpu03.conf\n") {
		t.Errorf("script does not look for the declared drain: %q", fake.Calls[0].Script)
	}
}
