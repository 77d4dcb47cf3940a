package slurm

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// pendingFile lists, one per line, the nodes whose slurmd must still restart after an
// ordered restart. Apply writes it before it returns the nodes to restart, so a restart
// that fails, or an apply that ends before it, is not forgotten: the next read reports it
// and the next apply does it. It is not a fragment (*.conf), so assembly never sees it.
const pendingFile = FragmentDir + "/.pending-restart"

// pendingLock serializes the read-modify-write of pendingFile between processes.
const pendingLock = FragmentDir + "/.pending-restart.lock"

func parsePending(sec transport.Section) ([]string, error) {
	if sec.Status != 0 {
		return nil, fmt.Errorf("read %s: status %d", pendingFile, sec.Status)
	}
	var nodes []string
	for _, line := range sec.Lines {
		name := strings.TrimSpace(line)
		if !NamePattern.MatchString(name) {
			return nil, fmt.Errorf("read %s: %q is not a node name", pendingFile, name)
		}
		nodes = append(nodes, name)
	}
	return nodes, nil
}

func checkNodes(nodes []string) error {
	for _, n := range nodes {
		if !NamePattern.MatchString(n) {
			return fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", n)
		}
	}
	return nil
}

// pendingScript runs text on the list of pending restarts, under its lock, with the nodes as
// its arguments.
func pendingScript(text string, nodes []string) string {
	return transport.NewScript().Set("f", pendingFile).Set("dir", FragmentDir).Set("lock", pendingLock).
		Args(nodes...).Text(text).String()
}

//go:embed pending_add.sh
var pendingAdd string

//go:embed pending_clear.sh
var pendingClear string

// addPendingRestart adds nodes to pendingFile.
func addPendingRestart(ctx context.Context, ex transport.Executor, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	if err := checkNodes(nodes); err != nil {
		return err
	}
	script := pendingScript(pendingAdd, nodes)
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("record the pending slurmd restarts in %s: %w", pendingFile, err)
	}
	return nil
}

// ClearPendingRestart takes nodes off the list of pending slurmd restarts, once slurmd
// restarted there, or does not run there and fetches the configuration when it starts.
func ClearPendingRestart(ctx context.Context, ex transport.Executor, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	if err := checkNodes(nodes); err != nil {
		return err
	}
	script := pendingScript(pendingClear, nodes)
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("clear the pending slurmd restarts in %s: %w", pendingFile, err)
	}
	return nil
}

// restartSlurmdScript restarts slurmd only where it runs: a node that is not set up yet fetches
// the new configuration when its slurmd first starts.
var restartSlurmdScript = transport.ScriptEnv + `if systemctl is-active --quiet slurmd; then systemctl restart slurmd && echo restarted; fi`

// RestartSlurmd is the node's half of an ordered restart. It reports whether slurmd was running,
// and so restarted; running jobs survive it, since slurmstepd is not slurmd's child.
func RestartSlurmd(ctx context.Context, ex transport.Executor) (bool, error) {
	res, err := ex.Sudo(ctx, restartSlurmdScript, nil)
	if err != nil {
		return false, err
	}
	restarted := strings.TrimSpace(string(res.Stdout)) == "restarted"
	if restarted {
		transport.Changed(ctx, ex, "restarted slurmd for an ordered restart")
	}
	return restarted, nil
}
