package slurm

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Health is the controller's half of the guide's verification, read in one round trip:
// `scontrol ping` and every node's state from `sinfo -a`, which also lists the nodes that
// AllowGroups hides from the admin account.
type Health struct {
	// Ping is what scontrol ping printed.
	Ping         string
	ControllerUp bool
	// NodeStates maps each node to its state as sinfo prints it (idle, mixed, down*, ...).
	NodeStates map[string]string
}

var healthScript = transport.ScriptEnv + transport.SectionFuncs + healthText

//go:embed health.sh
var healthText string

// ReadHealth asks the controller how it and its nodes are. A controller that does not answer
// is a finding, not an error; an error means the checks could not run at all.
func ReadHealth(ctx context.Context, ex transport.Executor) (Health, error) {
	res, err := ex.Sudo(ctx, healthScript, nil)
	if err != nil {
		return Health{}, fmt.Errorf("read controller health: %w", err)
	}
	return parseHealth(res.Stdout)
}

func parseHealth(out []byte) (Health, error) {
	sections, err := transport.ParseSections(out)
	if err != nil {
		return Health{}, fmt.Errorf("read controller health: %w", err)
	}
	ping, nodes := sections["ping"], sections["nodes"]
	h := Health{Ping: strings.Join(ping.Lines, "\n"), NodeStates: map[string]string{}}
	h.ControllerUp = ping.Status == 0 && pingUp(h.Ping)
	if nodes.Status != 0 {
		return h, nil
	}
	// -N prints a node once per partition it is in; the state is the same on every line.
	for _, line := range nodes.Lines {
		if name, state, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			h.NodeStates[name] = strings.TrimSpace(state)
		}
	}
	return h, nil
}

// Usable reports whether a node state means the node takes jobs: idle, mixed, allocated or
// completing, without a flag such as * (not responding) or ~ (powered down).
func Usable(state string) bool {
	switch state {
	case "idle", "mixed", "allocated", "completing":
		return true
	}
	return false
}
