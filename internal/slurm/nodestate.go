package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// NodeRuntime is a node as slurmctld reports it, apart from its configuration.
type NodeRuntime struct {
	// State is scontrol's State= ("MIXED+DRAIN").
	State string
	// Drained: the DRAIN flag is set, whether jobs still run there (draining) or not (drained).
	Drained bool
	// Reason is the reason slurmctld keeps for the node, without its "[user@time]" stamp;
	// without accounting storage it outlives a resume, so it counts only while Drained.
	Reason string
}

// NodeStateChange is a drain or a resume the activation sets with scontrol.
type NodeStateChange struct {
	Node   string
	Drain  bool
	Reason string
}

func (c NodeStateChange) String() string {
	if c.Drain {
		return fmt.Sprintf("drain %s (%s)", c.Node, c.Reason)
	}
	return "resume " + c.Node
}

// DrainReasonPattern keeps a reason to what survives scontrol's argument parsing, a fragment
// line and the "[user@time]" stamp slurmctld appends unchanged: no brackets, quotes or
// control characters, no whitespace at either end.
var DrainReasonPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9 ._,:;/()+!?%&*=@-]{0,198}[A-Za-z0-9._,:;/()+!?%&*=@-])?$`)

// CheckDrainReason refuses a drain reason slurmctld would not keep as written.
func CheckDrainReason(reason string) error {
	if reason == "" || DrainReasonPattern.MatchString(reason) {
		return nil
	}
	return fmt.Errorf("drain reason %q: use 1 to 200 letters, digits, spaces and ._,:;/()+!?%%&*=@-, starting with a letter or digit and not ending in a space", reason)
}

// reasonStamp is what slurmctld appends to a reason: " [root@2026-12-01T14:23:47]".
var reasonStamp = regexp.MustCompile(`\s*\[[^\]\s]*@[^\]\s]*\]\s*$`)

// nodeRuntimeScript lists every node slurmctld knows, one line each, while it runs; asked
// while it does not run, scontrol would only wait for its timeout.
//
//go:embed node_runtime.sh
var nodeRuntimeScript string

// parseNodeRuntimes reads `scontrol show node -o`, where Reason= comes last and holds spaces.
// A nil map means nothing is known: slurmctld does not run, or did not answer (it answers
// only seconds after a start), which is no reason to fail a plan.
func parseNodeRuntimes(sec transport.Section) map[string]NodeRuntime {
	if sec.Status != 0 {
		return nil
	}
	out := map[string]NodeRuntime{}
	for _, line := range sec.Lines {
		name, rt, ok := parseNodeRuntime(line)
		if ok {
			out[name] = rt
		}
	}
	return out
}

func parseNodeRuntime(line string) (string, NodeRuntime, bool) {
	var name string
	var rt NodeRuntime
	before, reason, hasReason := strings.Cut(line, " Reason=")
	for _, field := range strings.Fields(before) {
		if v, ok := strings.CutPrefix(field, "NodeName="); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(field, "State="); ok {
			rt.State = v
		}
	}
	if name == "" || rt.State == "" {
		return "", NodeRuntime{}, false
	}
	for _, flag := range strings.Split(rt.State, "+") {
		if strings.HasPrefix(flag, "DRAIN") {
			rt.Drained = true
		}
	}
	if hasReason {
		rt.Reason = strings.TrimSpace(reasonStamp.ReplaceAllString(reason, ""))
	}
	return name, rt, true
}

// DeclaredDrain is what a node's runtime says about its drain, as gpucluster_slurm_node's
// drain_reason holds it: the reason while it is drained, "" while it takes jobs.
func (rt NodeRuntime) DeclaredDrain() string {
	if !rt.Drained {
		return ""
	}
	if rt.Reason == "" {
		// Drained without a reason cannot be declared as is; show that it is drained.
		return "drained"
	}
	return rt.Reason
}

// nodeStateChanges are the drains and resumes that bring the nodes' runtime states to what
// their definitions declare. A node slurmctld does not know yet (not activated, or slurmctld
// not running) gets its declared drain once it is known, and needs no resume.
func nodeStateChanges(nodes []NodeDef, runtime map[string]NodeRuntime) []NodeStateChange {
	var changes []NodeStateChange
	for _, n := range nodes {
		rt, known := runtime[n.Name]
		switch {
		case n.DrainReason != "" && (!known || !rt.Drained || rt.Reason != n.DrainReason):
			changes = append(changes, NodeStateChange{Node: n.Name, Drain: true, Reason: n.DrainReason})
		case n.DrainReason == "" && known && rt.Drained:
			changes = append(changes, NodeStateChange{Node: n.Name})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Node < changes[j].Node })
	return changes
}

// SetNodeStates drains and resumes nodes with scontrol until their runtime states are what
// their definitions declare (drain_reason), after the activation: a state change needs no
// file and no restart, and jobs running on a drained node run to their end. It reads the
// controller afresh, so what the activation just did is seen.
func SetNodeStates(ctx context.Context, h ControllerHost) ([]NodeStateChange, error) {
	st, err := readState(ctx, h)
	if err != nil {
		return nil, err
	}
	fragments, err := ParseFragments(st.fragments)
	if err != nil {
		return nil, err
	}
	changes := nodeStateChanges(fragments.Nodes, st.runtime)
	if len(changes) > 0 && !st.active {
		return nil, errors.New("slurmctld does not run, so no node can be drained or resumed")
	}
	var errs []error
	var done []NodeStateChange
	for _, c := range changes {
		if err := setNodeState(ctx, h, c); err != nil {
			errs = append(errs, err)
			continue
		}
		transport.Changed(ctx, h, c.String())
		done = append(done, c)
	}
	return done, errors.Join(errs...)
}

func setNodeState(ctx context.Context, ex transport.Executor, c NodeStateChange) error {
	if !NamePattern.MatchString(c.Node) {
		return fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", c.Node)
	}
	script := transport.NewScript().Set("n", c.Node).Set("kept", reasonKept).Text(resumeScript)
	if c.Drain {
		if err := CheckDrainReason(c.Reason); err != nil {
			return err
		}
		script = transport.NewScript().Command("scontrol", "update", "nodename="+c.Node, "state=drain", "reason="+c.Reason)
	}
	res, err := ex.Sudo(ctx, script.String(), nil)
	if err != nil {
		return fmt.Errorf("%s: scontrol update: %w", c, err)
	}
	if strings.TrimSpace(string(res.Stdout)) == reasonKept {
		transport.Changed(ctx, ex, c.Node+" keeps its last drain reason until a job can start there")
	}
	return nil
}

// reasonKept is what resumeScript prints when the node's old reason stays.
const reasonKept = "reason kept"

// resumeScript resumes node "$n" and clears its reason.
//
// UNDRAIN clears the drain and leaves the base state alone. For a node that has not
// registered since slurmctld started (UNKNOWN+DRAIN: a node added again, whose drain from
// its removal slurmctld kept), Slurm clears the drain and still answers "Invalid node
// state specified": what counts is whether the drain is gone.
//
// slurmctld clears a node's reason on a resume only through its accounting storage plugin
// (clusteracct_storage_g_node_up, a no-op without AccountingStorageType), and otherwise only
// when it allocates the node to a job; no scontrol command clears it. So a resumed node that
// still shows a reason gets an allocation that runs nothing (salloc --no-shell), cancelled
// at once. A node whose CPUs are all taken keeps the reason until its next job starts.
//
//go:embed resume.sh
var resumeScript string

// RemovalReason is the drain reason of a node whose definition or compute setup is removed.
const RemovalReason = "removed from the configuration by gpucluster"

// JobsRunningError is a node that still runs jobs when it is to leave the cluster.
type JobsRunningError struct {
	Node string
	Jobs []string
}

func (e *JobsRunningError) Error() string {
	return fmt.Sprintf("jobs %s still run on %s", strings.Join(e.Jobs, ", "), e.Node)
}

//go:embed drain_for_removal.sh
var drainForRemoval string

//go:embed jobs_on.sh
var jobsOnText string

// DrainForRemoval prepares node's removal: it is drained (a drain it has already keeps its
// reason), so no new job starts there, and then no job may run there; jobs running are
// awaited for up to wait, then a *JobsRunningError. A node slurmctld does not know, or a
// controller whose slurmctld does not run, has nothing to drain.
func DrainForRemoval(ctx context.Context, ex transport.Executor, node string, wait time.Duration) error {
	if !NamePattern.MatchString(node) {
		return fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", node)
	}
	script := transport.NewScript().Set("n", node).Set("reason", RemovalReason).Text(drainForRemoval).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("drain %s before its removal: %w", node, err)
	}
	if strings.TrimSpace(string(res.Stdout)) == "drained" {
		transport.Changed(ctx, ex, "drained "+node+" before its removal")
	}
	return waitNoJobs(ctx, ex, node, wait)
}

// jobsOn lists the jobs slurmctld has running (or ending) on node; none while it does not run.
func jobsOn(ctx context.Context, ex transport.Executor, node string) ([]string, error) {
	script := transport.NewScript().Set("n", node).Text(jobsOnText).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return nil, fmt.Errorf("list the jobs on %s: %w", node, err)
	}
	return strings.Fields(string(res.Stdout)), nil
}
