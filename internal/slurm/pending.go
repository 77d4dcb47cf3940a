package slurm

import (
	"context"
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

func quotedNodes(nodes []string) (string, error) {
	quoted := make([]string, len(nodes))
	for i, n := range nodes {
		if !NamePattern.MatchString(n) {
			return "", fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", n)
		}
		quoted[i] = transport.Quote(n)
	}
	return strings.Join(quoted, " "), nil
}

// addPendingRestart adds nodes to pendingFile.
func addPendingRestart(ctx context.Context, ex transport.Executor, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	names, err := quotedNodes(nodes)
	if err != nil {
		return err
	}
	script := transport.ScriptEnv + pendingScriptHead + `{ [ -e "$f" ] && cat -- "$f"; printf '%s\n' ` + names + `; } | sort -u > "$f.tmp" && mv -f -- "$f.tmp" "$f"
`
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
	names, err := quotedNodes(nodes)
	if err != nil {
		return err
	}
	var patterns []string
	for _, n := range strings.Fields(names) {
		patterns = append(patterns, "-e "+n)
	}
	script := transport.ScriptEnv + pendingScriptHead + `[ -e "$f" ] || exit 0
grep -vxF ` + strings.Join(patterns, " ") + ` -- "$f" > "$f.tmp"
[ $? -le 1 ] || exit 2
if [ -s "$f.tmp" ]; then mv -f -- "$f.tmp" "$f"; else rm -f -- "$f.tmp" "$f"; fi
`
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("clear the pending slurmd restarts in %s: %w", pendingFile, err)
	}
	return nil
}

var pendingScriptHead = "f=" + transport.Quote(pendingFile) + "\nmkdir -p -m 0755 -- " + transport.Quote(FragmentDir) +
	" || exit\nexec 9>>" + transport.Quote(pendingLock) + " && flock 9 || exit\n"

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
