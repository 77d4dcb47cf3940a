package slurm

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// SlurmdDefaultsPath is read by Debian's and Ubuntu's slurmd unit.
const SlurmdDefaultsPath = "/etc/default/slurmd"

// SlurmdDefaults is a configless node's whole Slurm configuration, the
// guide's single line: slurmd fetches slurm.conf, cgroup.conf and gres.conf
// from the controller when it starts.
func SlurmdDefaults(controller string, port int) ([]byte, error) {
	// --conf-server takes a DNS host name.
	if !transport.IsHostName(controller) {
		return nil, fmt.Errorf("controller %q is not a host name", controller)
	}
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("slurmctld port %d is out of range", port)
	}
	return fmt.Appendf(nil, "SLURMD_OPTIONS=\"--conf-server %s:%d\"\n", controller, port), nil
}

// NodeWaitTimeout bounds the wait for a node to register: slurmd fetches
// its configuration and registers within seconds when MUNGE and the
// network work.
const NodeWaitTimeout = 2 * time.Minute

//go:embed node_ready.sh
var nodeReady string

// WaitNodeReady polls the controller until node has registered and is
// Usable, with backoff, for at most timeout. It returns the state it saw. A
// node that stays down or drained (RealMemory too high, a bad gres.conf) ends
// in an error that names the state. It asks `scontrol show node`, which knows
// every defined node; sinfo lists only the nodes of some partition, so a node
// set up before its partition would never show there.
func WaitNodeReady(ctx context.Context, controller transport.Executor, node string, timeout time.Duration) (string, error) {
	if !NamePattern.MatchString(node) {
		return "", fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", node)
	}
	// A drain the node's definition declares is the state wanted, not a failure to register.
	script := transport.NewScript().Set("n", node).Set("f", FragmentDir+"/"+NodeFile(node)).Set("marker", declaredDrainMarker).
		Text(nodeReady).String()
	var state string
	err := poll(ctx, timeout, "wait for node "+node+" to register", func(ctx context.Context) error {
		res, err := controller.Sudo(ctx, script, nil)
		if err != nil {
			return fmt.Errorf("scontrol show node: %w", err)
		}
		raw, ok := scontrolNodeState(string(res.Stdout))
		if !ok {
			return fmt.Errorf("scontrol show node does not show %s's state: %w", node, errNotYet)
		}
		state = raw
		declared := strings.Contains(string(res.Stdout), declaredDrainMarker)
		if !Usable(state) && (!declared || !usableDrained(state)) {
			return fmt.Errorf("node %s is %s: %w", node, state, errNotYet)
		}
		return nil
	})
	return state, err
}

// declaredDrainMarker is WaitNodeReady's sign that the node's fragment declares a drain.
const declaredDrainMarker = "gpucluster-declared-drain"

// usableDrained is a registered node that only its drain keeps from new jobs: "idle+drain",
// "mixed+drain".
func usableDrained(state string) bool {
	base, flags, ok := strings.Cut(state, "+")
	return ok && flags == "drain" && Usable(base)
}

// scontrolNodeState reads State= from `scontrol show node -o` ("State=IDLE+DRAIN") in the
// form sinfo -o %T prints, so one Usable judges both: IDLE is idle, MIXED+COMPLETING
// completing; any other flag stays visible ("idle+drain", "down*"), which Usable refuses.
func scontrolNodeState(out string) (string, bool) {
	for _, field := range strings.Fields(out) {
		value, ok := strings.CutPrefix(field, "State=")
		if !ok {
			continue
		}
		state := strings.ToLower(value)
		if base, flags, ok := strings.Cut(state, "+"); ok && flags == "completing" && !strings.HasSuffix(base, "*") {
			return "completing", true
		}
		return state, true
	}
	return "", false
}
