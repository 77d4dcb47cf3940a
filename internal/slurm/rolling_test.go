package slurm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// fakeNode is a GPU server as the fake cluster keeps it.
type fakeNode struct {
	boot, slurmdStart int
	drained           bool
	reason            string
	jobs              int // jobs still running: each look at them ends one
	down              int // SSH attempts that fail after a reboot
	neverBack         bool
	cpus, gpus        int
}

// fakeCluster answers the rolling reboot's scripts on the controller and on the servers, and
// logs every drain, reboot and resume, with how many servers were out of service then.
type fakeCluster struct {
	mu      sync.Mutex
	nodes   map[string]*fakeNode
	records map[string]string
	log     []string
	out     map[string]bool
	maxOut  int
}

func newFakeCluster(names ...string) *fakeCluster {
	f := &fakeCluster{nodes: map[string]*fakeNode{}, records: map[string]string{}, out: map[string]bool{}}
	for _, n := range names {
		f.nodes[n] = &fakeNode{boot: 1, slurmdStart: 1, cpus: 8, gpus: 4}
	}
	return f
}

var (
	fakeNodeName = regexp.MustCompile(`\bgpu[0-9]+\b`)
	fakeTrigger  = regexp.MustCompile(`(?m)^trigger='?([^'\n]*)`)
)

func quotedNode(script string) string {
	return fakeNodeName.FindString(script)
}

func nodeNames(script string) map[string]bool {
	out := map[string]bool{}
	for _, n := range fakeNodeName.FindAllString(script, -1) {
		out[n] = true
	}
	return out
}

func (f *fakeCluster) markOut(node string, out bool) {
	if out {
		f.out[node] = true
	} else {
		delete(f.out, node)
	}
	f.maxOut = max(f.maxOut, len(f.out))
}

// Sudo is the controller.
func (f *fakeCluster) Sudo(_ context.Context, script string, _ []byte) (transport.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	node := quotedNode(script)
	n := f.nodes[node]
	switch {
	case strings.Contains(script, "head -n 1"):
		var b strings.Builder
		for name := range nodeNames(script) {
			if t, ok := f.records[name]; ok {
				fmt.Fprintf(&b, "%s\t%s\n", name, t)
			}
		}
		return transport.Result{Stdout: []byte(b.String())}, nil
	case strings.Contains(script, "mv -f"):
		f.records[node] = fakeTrigger.FindStringSubmatch(script)[1]
		return transport.Result{}, nil
	case n == nil:
		return transport.Result{}, fmt.Errorf("unexpected script: %s", script)
	case strings.Contains(script, "state=drain"):
		n.drained, n.reason = true, RollingReason
		f.markOut(node, true)
		f.log = append(f.log, "drain "+node)
	case strings.Contains(script, "state=undrain"):
		n.drained = false
		f.markOut(node, false)
		f.log = append(f.log, "resume "+node)
	case strings.Contains(script, "squeue"):
		if n.jobs > 0 {
			n.jobs--
			return transport.Result{Stdout: []byte("42\n")}, nil
		}
	case strings.Contains(script, "scontrol show node -o"):
		state := "IDLE"
		if n.drained {
			state += "+DRAIN"
		}
		if n.down > 0 || n.neverBack {
			state += "+NOT_RESPONDING"
		}
		line := fmt.Sprintf("NodeName=%s CPUTot=8 RealMemory=1000 State=%s SlurmdStartTime=t%d", node, state, n.slurmdStart)
		if n.reason != "" {
			line += " Reason=" + n.reason + " [root@2026-12-01T14:23:47]"
		}
		return transport.Result{Stdout: []byte(line + "\n")}, nil
	default:
		return transport.Result{}, fmt.Errorf("unexpected script: %s", script)
	}
	return transport.Result{}, nil
}

// Read is the controller too: the fake shares no reads.
func (f *fakeCluster) Read(ctx context.Context, script string) (transport.Result, error) {
	return f.Sudo(ctx, script, nil)
}

// server is one GPU server's executor.
type server struct {
	f    *fakeCluster
	name string
}

func (s server) Read(ctx context.Context, script string) (transport.Result, error) {
	return s.Sudo(ctx, script, nil)
}

func (s server) Sudo(_ context.Context, script string, _ []byte) (transport.Result, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	n := s.f.nodes[s.name]
	switch {
	case strings.Contains(script, "systemctl --no-block reboot"):
		n.boot++
		n.slurmdStart++
		n.down = 2
		s.f.log = append(s.f.log, "reboot "+s.name)
		return transport.Result{}, nil
	case strings.Contains(script, "boot_id"):
		return transport.Result{Stdout: []byte(transporttest.Sections(fmt.Sprintf(
			"@@gpucluster boot\nboot-%d\n@@rc 0\n@@gpucluster slurmd\nNodeName=%s CPUs=%d Boards=1 SocketsPerBoard=1 CoresPerSocket=%d ThreadsPerCore=1 RealMemory=1000\nUpTime=0-00:01:00\n@@rc 0\n@@gpucluster gpus\n%s@@rc 0\n",
			n.boot, s.name, n.cpus, n.cpus, gpuLines(n.gpus))))}, nil
	}
	return transport.Result{}, fmt.Errorf("unexpected script on %s: %s", s.name, script)
}

func gpuLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "GPU %d: NVIDIA A100 (UUID: GPU-%d)\n", i, i)
	}
	return b.String()
}

func (f *fakeCluster) rolling(trigger string, maxUnavailable int) Rolling {
	return Rolling{
		Controller: f,
		Connect: func(_ context.Context, node string) (transport.Executor, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			n := f.nodes[node]
			if n.neverBack && n.boot > 1 {
				return nil, errors.New("connection refused")
			}
			if n.down > 0 {
				n.down--
				return nil, errors.New("connection refused")
			}
			return server{f: f, name: node}, nil
		},
		Forget:         func(string) {},
		Trigger:        trigger,
		MaxUnavailable: maxUnavailable,
		DrainTimeout:   time.Minute,
		BootTimeout:    5 * time.Second,
	}
}

func TestRollingOneAtATime(t *testing.T) {
	f := newFakeCluster("gpu01", "gpu02")
	f.nodes["gpu01"].jobs = 2
	if err := f.rolling("535", 1).Reboot(context.Background(), []string{"gpu01", "gpu02"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"drain gpu01", "reboot gpu01", "resume gpu01", "drain gpu02", "reboot gpu02", "resume gpu02"}
	if !reflect.DeepEqual(f.log, want) {
		t.Errorf("log = %q, want %q", f.log, want)
	}
	if f.maxOut != 1 {
		t.Errorf("%d servers out at once, want 1", f.maxOut)
	}
	if !reflect.DeepEqual(f.records, map[string]string{"gpu01": "535", "gpu02": "535"}) {
		t.Errorf("records = %v", f.records)
	}
}

func TestRollingTwoAtATime(t *testing.T) {
	f := newFakeCluster("gpu01", "gpu02", "gpu03")
	if err := f.rolling("535", 2).Reboot(context.Background(), []string{"gpu01", "gpu02", "gpu03"}); err != nil {
		t.Fatal(err)
	}
	if f.maxOut != 2 {
		t.Errorf("%d servers out at once, want 2", f.maxOut)
	}
	if len(f.records) != 3 {
		t.Errorf("records = %v, want all three", f.records)
	}
}

func TestRollingRefusesWhileJobsRun(t *testing.T) {
	f := newFakeCluster("gpu01", "gpu02")
	f.nodes["gpu01"].jobs = 1000
	r := f.rolling("535", 1)
	r.DrainTimeout = 500 * time.Millisecond
	err := r.Reboot(context.Background(), []string{"gpu01", "gpu02"})
	var jobs *JobsRunningError
	var ne *NodeRebootError
	if !errors.As(err, &jobs) || !errors.As(err, &ne) || ne.Node != "gpu01" || !ne.Drained {
		t.Fatalf("err = %v, want gpu01's jobs still running, gpu01 left drained", err)
	}
	if want := []string{"drain gpu01"}; !reflect.DeepEqual(f.log, want) {
		t.Errorf("log = %q, want %q: nothing rebooted, gpu02 untouched", f.log, want)
	}
}

func TestRollingStopsAtAServerThatDoesNotComeBack(t *testing.T) {
	f := newFakeCluster("gpu01", "gpu02")
	f.nodes["gpu01"].neverBack = true
	r := f.rolling("535", 1)
	r.BootTimeout = time.Second
	err := r.Reboot(context.Background(), []string{"gpu01", "gpu02"})
	var ne *NodeRebootError
	if !errors.As(err, &ne) || ne.Node != "gpu01" || ne.Step != "boot" {
		t.Fatalf("err = %v, want gpu01 not back", err)
	}
	if want := []string{"drain gpu01", "reboot gpu01"}; !reflect.DeepEqual(f.log, want) {
		t.Errorf("log = %q, want %q: gpu02 untouched", f.log, want)
	}
	if len(f.records) != 0 {
		t.Errorf("records = %v, want none", f.records)
	}
}

func TestRollingStopsAtOtherHardware(t *testing.T) {
	f := newFakeCluster("gpu01", "gpu02")
	r := f.rolling("535", 1)
	connect := r.Connect
	r.Connect = func(ctx context.Context, node string) (transport.Executor, error) {
		f.mu.Lock()
		if n := f.nodes[node]; n.boot > 1 {
			n.gpus = 3
		}
		f.mu.Unlock()
		return connect(ctx, node)
	}
	err := r.Reboot(context.Background(), []string{"gpu01", "gpu02"})
	var ne *NodeRebootError
	if !errors.As(err, &ne) || ne.Step != "hardware" || !strings.Contains(err.Error(), "3 GPUs after the reboot, 4 before") {
		t.Fatalf("err = %v, want gpu01 back with a GPU missing", err)
	}
	if want := []string{"drain gpu01", "reboot gpu01"}; !reflect.DeepEqual(f.log, want) {
		t.Errorf("log = %q, want %q", f.log, want)
	}
}

func TestRollingKeepsADrainMadeBefore(t *testing.T) {
	f := newFakeCluster("gpu01")
	f.nodes["gpu01"].drained, f.nodes["gpu01"].reason = true, "bad fan"
	if err := f.rolling("535", 1).Reboot(context.Background(), []string{"gpu01"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"reboot gpu01"}; !reflect.DeepEqual(f.log, want) {
		t.Errorf("log = %q, want %q: no drain of ours, no resume", f.log, want)
	}
	if n := f.nodes["gpu01"]; !n.drained || n.reason != "bad fan" {
		t.Errorf("gpu01 drained=%v reason=%q, want its own drain kept", n.drained, n.reason)
	}
}

// A run stopped after gpu01 goes on with gpu02 alone.
func TestRollingPendingFromRecords(t *testing.T) {
	f := newFakeCluster("gpu01", "gpu02")
	f.records["gpu01"] = "550"
	f.records["gpu02"] = "535"
	records, err := ReadRebootRecords(context.Background(), f, []string{"gpu01", "gpu02"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Pending([]string{"gpu01", "gpu02"}, records, "550"); !reflect.DeepEqual(got, []string{"gpu02"}) {
		t.Errorf("pending = %q, want gpu02", got)
	}
}

func TestWaves(t *testing.T) {
	got := Waves([]string{"a", "b", "c"}, 2)
	if want := [][]string{{"a", "b"}, {"c"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Waves = %q, want %q", got, want)
	}
}

func TestCheckRollingNodes(t *testing.T) {
	if err := CheckRollingNodes([]string{"gpu01", "gpu01"}); err == nil {
		t.Error("a node listed twice passed")
	}
	if err := CheckRollingNodes([]string{"gpu01; reboot"}); err == nil {
		t.Error("a name with a shell word passed")
	}
}

func TestParseNodeLine(t *testing.T) {
	n, err := parseNodeLine("gpu01", "NodeName=gpu01 CPUTot=2 RealMemory=24105 State=IDLE+DRAIN SlurmdStartTime=2026-12-03T16:46:15 Reason=rolling reboot by gpucluster [root@2026-12-03T16:46:25]\n")
	if err != nil {
		t.Fatal(err)
	}
	if n.realMemory != 24105 || n.slurmdStart != "2026-12-03T16:46:15" || !n.Drained || n.Reason != RollingReason {
		t.Errorf("parsed %+v", n)
	}
	if _, err := parseNodeLine("gpu01", "NodeName=gpu01 RealMemory=lots State=IDLE\n"); err == nil {
		t.Error("an unreadable RealMemory passed")
	}
	if _, err := parseNodeLine("gpu01", "Node gpu01 not found\n"); err == nil {
		t.Error("a node slurmctld does not know passed")
	}
}
