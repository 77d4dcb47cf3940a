package slurm

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// SlurmdDefaultsPath is read by Debian's and Ubuntu's slurmd unit.
const SlurmdDefaultsPath = "/etc/default/slurmd"

// hostName matches a DNS host name, the form --conf-server takes.
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// SlurmdDefaults is a configless node's whole Slurm configuration, the
// guide's single line: slurmd fetches slurm.conf, cgroup.conf and gres.conf
// from the controller when it starts.
func SlurmdDefaults(controller string, port int) ([]byte, error) {
	if !hostName.MatchString(controller) {
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

// readyStates are the states of a registered node that can run jobs.
var readyStates = map[string]bool{"idle": true, "allocated": true, "mixed": true}

// WaitNodeReady polls the controller until node has registered and is
// idle, allocated or mixed, with backoff, for at most timeout. It returns
// the state it saw. A node that stays down or drained (RealMemory too
// high, a bad gres.conf) ends in an error that names the state.
func WaitNodeReady(ctx context.Context, controller Executor, node string, timeout time.Duration) (string, error) {
	if !objectName.MatchString(node) {
		return "", fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", node)
	}
	// -a: partitions with AllowGroups are hidden from everyone else.
	script := transport.ScriptEnv + "sinfo -a -h -N -n " + transport.Quote(node) + " -o %T"
	var state string
	err := poll(ctx, timeout, "wait for node "+node+" to register", func(ctx context.Context) error {
		res, err := controller.Sudo(ctx, script, nil)
		if err != nil {
			return fmt.Errorf("sinfo: %w", err)
		}
		fields := strings.Fields(string(res.Stdout))
		if len(fields) == 0 {
			return fmt.Errorf("sinfo does not list %s: %w", node, errNotYet)
		}
		state = fields[0]
		if !readyStates[state] {
			return fmt.Errorf("node %s is %s: %w", node, state, errNotYet)
		}
		return nil
	})
	return state, err
}
