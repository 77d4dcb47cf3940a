package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// RollingReason is the drain reason of a node a rolling reboot takes out of service.
const RollingReason = "rolling reboot by gpucluster"

// RebootRecordDir holds, on the controller, one file per node with the trigger of the node's
// last rolling reboot: a run stopped at any point, even with Terraform killed, knows which
// nodes are done.
const RebootRecordDir = transport.StateDir + "/rolling-reboot"

// TriggerPattern keeps a trigger to one line of a record file, tabs and control characters
// aside.
var TriggerPattern = regexp.MustCompile(`^[ -~]{1,200}$`)

// Rolling reboots GPU servers a few at a time, each drained and idle first and back in
// service before the next goes.
type Rolling struct {
	Controller transport.Executor
	// Connect reaches a node; Forget drops its connection, and a failed dial of it, so the
	// next Connect dials afresh while the node reboots.
	Connect func(ctx context.Context, node string) (transport.Executor, error)
	Forget  func(node string)
	Trigger string
	// MaxUnavailable is how many nodes may be out of service at once.
	MaxUnavailable int
	// DrainTimeout bounds the wait for a drained node's jobs; BootTimeout the wait for it to
	// answer again and register with slurmctld.
	DrainTimeout, BootTimeout time.Duration
}

// Pending are the nodes, in order, whose last rolling reboot was not for trigger.
func Pending(order []string, records map[string]string, trigger string) []string {
	var out []string
	for _, n := range order {
		if records[n] != trigger {
			out = append(out, n)
		}
	}
	return out
}

// Waves splits order into the groups that are out of service together.
func Waves(order []string, maxUnavailable int) [][]string {
	maxUnavailable = max(maxUnavailable, 1)
	var out [][]string
	for len(order) > 0 {
		n := min(maxUnavailable, len(order))
		out = append(out, order[:n])
		order = order[n:]
	}
	return out
}

// CheckRollingNodes refuses a node list the run could not follow.
func CheckRollingNodes(order []string) error {
	seen := map[string]bool{}
	for _, n := range order {
		if !NamePattern.MatchString(n) {
			return fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", n)
		}
		if seen[n] {
			return fmt.Errorf("node %s is listed twice", n)
		}
		seen[n] = true
	}
	return nil
}

// ReadRebootRecords reads the controller's records of order's nodes: node to trigger.
func ReadRebootRecords(ctx context.Context, controller transport.Executor, order []string) (map[string]string, error) {
	if err := CheckRollingNodes(order); err != nil {
		return nil, err
	}
	script := transport.NewScript().Set("dir", RebootRecordDir).Args(order...).
		Text("for n; do [ -r \"$dir/$n\" ] || continue; printf '%s\\t' \"$n\"; head -n 1 -- \"$dir/$n\"; done\n").String()
	res, err := controller.Read(ctx, script)
	if err != nil {
		return nil, fmt.Errorf("read the rolling reboot records in %s: %w", RebootRecordDir, err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if node, trigger, ok := strings.Cut(line, "\t"); ok {
			out[node] = trigger
		}
	}
	return out, nil
}

func writeRebootRecord(ctx context.Context, controller transport.Executor, node, trigger string) error {
	script := transport.NewScript().Text(transport.StateDirText).
		Set("dir", RebootRecordDir).Set("f", RebootRecordDir+"/"+node).Set("trigger", trigger).
		Text("mkdir -p -- \"$dir\" && printf '%s\\n' \"$trigger\" > \"$f.new\" && mv -f -- \"$f.new\" \"$f\"\n").String()
	if _, err := controller.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("record %s's reboot in %s: %w", node, RebootRecordDir, err)
	}
	return nil
}

// Reboot reboots order's nodes, at most MaxUnavailable at once. A node that fails stops the run
// once the others of its wave are back; later nodes are not touched.
func (r Rolling) Reboot(ctx context.Context, order []string) error {
	if err := CheckRollingNodes(order); err != nil {
		return err
	}
	if !TriggerPattern.MatchString(r.Trigger) {
		return fmt.Errorf("trigger %q: use 1 to 200 printable ASCII characters", r.Trigger)
	}
	for _, wave := range Waves(order, r.MaxUnavailable) {
		errs := make([]error, len(wave))
		var wg sync.WaitGroup
		for i, node := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = r.rebootNode(ctx, node)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// NodeRebootError is a node the run stopped on, and what was left of it.
type NodeRebootError struct {
	Node string
	// Step is what failed: "check" (nothing done yet), "drain", "jobs", "reboot", "boot", "hardware", "register", "resume".
	Step string
	// Drained: the node was left drained (reason RollingReason, or the one it had).
	Drained bool
	Err     error
}

func (e *NodeRebootError) Error() string {
	return fmt.Sprintf("rolling reboot of %s, step %s: %v", e.Node, e.Step, e.Err)
}

func (e *NodeRebootError) Unwrap() error { return e.Err }

func (r Rolling) rebootNode(ctx context.Context, node string) error {
	fail := func(step string, drained bool, err error) error {
		return &NodeRebootError{Node: node, Step: step, Drained: drained, Err: err}
	}
	before, err := readNodeLine(ctx, r.Controller, node)
	if err != nil {
		return fail("check", false, err)
	}
	h, err := r.Connect(ctx, node)
	if err != nil {
		return fail("check", false, err)
	}
	boot, err := readBoot(ctx, h, node)
	if err != nil {
		return fail("check", false, err)
	}
	// A drain the node had is someone's decision: it stays after the reboot.
	held := before.Drained && before.Reason != RollingReason
	reason := RollingReason
	if held {
		reason = before.Reason
	} else if !before.Drained {
		if err := setNodeState(ctx, r.Controller, NodeStateChange{Node: node, Drain: true, Reason: RollingReason}); err != nil {
			return fail("drain", false, err)
		}
		transport.Changed(ctx, r.Controller, "drained "+node+" for its rolling reboot")
	}
	if err := waitNoJobs(ctx, r.Controller, node, r.DrainTimeout); err != nil {
		return fail("jobs", true, err)
	}
	if err := reboot(ctx, h, node); err != nil {
		return fail("reboot", true, err)
	}
	r.Forget(node)
	after, err := r.waitBoot(ctx, node, boot.id)
	if err != nil {
		return fail("boot", true, err)
	}
	if err := sameHardware(before, boot, after); err != nil {
		return fail("hardware", true, err)
	}
	if err := waitRegistered(ctx, r.Controller, node, before.slurmdStart, reason, r.BootTimeout); err != nil {
		return fail("register", true, err)
	}
	if !held {
		// The one resume of the provider, so a resume here clears what any other clears.
		if err := setNodeState(ctx, r.Controller, NodeStateChange{Node: node}); err != nil {
			return fail("resume", true, err)
		}
		if _, err := WaitNodeReady(ctx, r.Controller, node, r.BootTimeout); err != nil {
			return fail("resume", false, err)
		}
	}
	transport.Changed(ctx, r.Controller, "rebooted "+node+" for "+r.Trigger)
	if err := writeRebootRecord(ctx, r.Controller, node, r.Trigger); err != nil {
		return fail("resume", held, err)
	}
	return nil
}

// nodeLine is what the rolling reboot reads of a node from `scontrol show node -o`.
type nodeLine struct {
	NodeRuntime
	slurmdStart string
	realMemory  int64
}

// readNodeLine is no shared read (transport.Executor.Read): the waits ask it again and again.
func readNodeLine(ctx context.Context, controller transport.Executor, node string) (nodeLine, error) {
	script := transport.ScriptEnv + "scontrol show node -o " + transport.Quote(node) + "\n"
	res, err := controller.Sudo(ctx, script, nil)
	if err != nil {
		return nodeLine{}, fmt.Errorf("scontrol show node %s: %w", node, err)
	}
	return parseNodeLine(node, string(res.Stdout))
}

func parseNodeLine(node, out string) (nodeLine, error) {
	line := strings.TrimSpace(out)
	name, rt, ok := parseNodeRuntime(line)
	if !ok || name != node {
		return nodeLine{}, fmt.Errorf("slurmctld does not know node %s: scontrol show node printed %q", node, line)
	}
	n := nodeLine{NodeRuntime: rt}
	before, _, _ := strings.Cut(line, " Reason=")
	for _, field := range strings.Fields(before) {
		if v, ok := strings.CutPrefix(field, "SlurmdStartTime="); ok {
			n.slurmdStart = v
		}
		if v, ok := strings.CutPrefix(field, "RealMemory="); ok {
			mem, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nodeLine{}, fmt.Errorf("scontrol show node %s: RealMemory=%s: %w", node, v, err)
			}
			n.realMemory = mem
		}
	}
	return n, nil
}

// bootState is what a node says about its boot and its hardware.
type bootState struct {
	id       string
	hardware nodes.Hardware
	gpus     int
}

var bootScript = transport.ScriptEnv + transport.SectionFuncs + bootText

//go:embed boot.sh
var bootText string

func readBoot(ctx context.Context, h transport.Executor, node string) (bootState, error) {
	secs, err := transport.SudoSections(ctx, h, bootScript, "read "+node+"'s boot id and hardware")
	if err != nil {
		return bootState{}, err
	}
	b := bootState{id: strings.Join(secs["boot"].Lines, "")}
	if b.id == "" {
		return bootState{}, fmt.Errorf("%s has no boot id in /proc/sys/kernel/random/boot_id", node)
	}
	cfg, err := nodes.ParseSlurmdC(strings.Join(secs["slurmd"].Lines, "\n"))
	if err != nil {
		return bootState{}, fmt.Errorf("%s: %w", node, err)
	}
	b.hardware = cfg.Hardware
	b.gpus = len(nodes.ParseNvidiaSMIList(strings.Join(secs["gpus"].Lines, "\n")))
	return b, nil
}

// sameHardware wants the node back as it went: the same CPUs and GPUs, and at least the memory
// slurmctld expects (a figure that moves by a few MB from boot to boot).
func sameHardware(line nodeLine, before, after bootState) error {
	a, b := after.hardware, before.hardware
	a.RealMemoryMiB, b.RealMemoryMiB = 0, 0
	if a != b {
		return fmt.Errorf("slurmd -C reports %+v after the reboot, %+v before", after.hardware, before.hardware)
	}
	if after.gpus != before.gpus {
		return fmt.Errorf("nvidia-smi -L lists %d GPUs after the reboot, %d before", after.gpus, before.gpus)
	}
	if line.realMemory > 0 && after.hardware.RealMemoryMiB < line.realMemory {
		return fmt.Errorf("slurmd -C reports RealMemory=%d after the reboot, below the %d slurmctld expects", after.hardware.RealMemoryMiB, line.realMemory)
	}
	return nil
}

func reboot(ctx context.Context, h transport.Executor, node string) error {
	_, err := h.Sudo(ctx, transport.ScriptEnv+"systemctl --no-block reboot\n", nil)
	var lost *transport.ConnectionLostError
	if err != nil && !errors.As(err, &lost) {
		return fmt.Errorf("systemctl reboot on %s: %w", node, err)
	}
	return nil
}

// bootAttempt bounds one look at a rebooting node, so a connection to the node as it went
// down does not hold the wait.
const bootAttempt = 15 * time.Second

// waitBoot waits for the node to answer over SSH with a boot id other than old.
func (r Rolling) waitBoot(ctx context.Context, node, old string) (bootState, error) {
	var b bootState
	err := poll(ctx, r.BootTimeout, "wait for "+node+" to come back from its reboot", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, bootAttempt)
		defer cancel()
		h, err := r.Connect(ctx, node)
		if err == nil {
			b, err = readBoot(ctx, h, node)
		}
		if err != nil {
			r.Forget(node)
			// Only the text: a failed dial here is the reboot's, not a connection setting to fix.
			return fmt.Errorf("%w: %s", errNotYet, err.Error())
		}
		if b.id == old {
			return fmt.Errorf("%s still runs its boot %s: %w", node, old, errNotYet)
		}
		return nil
	})
	return b, err
}

// waitRegistered waits for slurmd on node to register again: a slurmd start other than the
// one before, responding, and the drain reason the node went with (slurmctld puts its own in
// its place when it refuses the node's hardware).
func waitRegistered(ctx context.Context, controller transport.Executor, node, startBefore, reason string, timeout time.Duration) error {
	return poll(ctx, timeout, "wait for slurmd on "+node+" to register", func(ctx context.Context) error {
		n, err := readNodeLine(ctx, controller, node)
		if err != nil {
			return err
		}
		if n.slurmdStart == startBefore || n.slurmdStart == "" || n.slurmdStart == "None" {
			return fmt.Errorf("slurmd on %s has not registered since the reboot (SlurmdStartTime=%s): %w", node, n.slurmdStart, errNotYet)
		}
		if !registered(n.State) {
			return fmt.Errorf("node %s is %s: %w", node, n.State, errNotYet)
		}
		if n.Reason != reason {
			return fmt.Errorf("slurmctld drained %s with its own reason %q", node, n.Reason)
		}
		return nil
	})
}

// registered is a State= of a node whose slurmd answers: no DOWN, NOT_RESPONDING or INVAL.
func registered(state string) bool {
	for _, f := range strings.Split(state, "+") {
		switch f {
		case "DOWN", "UNKNOWN", "NOT_RESPONDING", "INVAL", "FAIL", "FUTURE":
			return false
		}
	}
	return true
}

// waitNoJobs waits up to wait for the jobs on node to end, then refuses with a
// *JobsRunningError; it never ends a job.
func waitNoJobs(ctx context.Context, ex transport.Executor, node string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := firstPoll
	for {
		jobs, err := jobsOn(ctx, ex, node)
		if err != nil || len(jobs) == 0 {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return &JobsRunningError{Node: node, Jobs: jobs}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the jobs on %s: %w", node, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, maxPoll)
	}
}
