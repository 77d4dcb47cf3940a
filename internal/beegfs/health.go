package beegfs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Health is what the guide's BeeGFS verification, `beegfs health check
// --mgmtd-addr HOST:8010` run on the controller, found.
type Health struct {
	// Passed is the command's exit status 0.
	Passed bool
	// Failing are the checks it marked degraded, critical or unknown, as it
	// printed them, then its error line when it failed for another reason
	// (the management service unreachable, say).
	Failing []string
}

// healthMarks open the lines of checks that did not pass (beegfs-go v8.4.0
// ctl/internal/cmd/health/check.go: critical, degraded, unknown).
var healthMarks = []string{"🛑", "\u26a0\ufe0f", "❓"}

// errChecksFailed is the command's own summary of failing checks, already
// named one by one.
const errChecksFailed = "Error: one or more checks failed"

// CheckHealth runs the guide's health check through ex on the controller.
func CheckHealth(ctx context.Context, ex transport.Executor, mgmtdHost string) (Health, error) {
	addr, err := MgmtdAPIAddr(mgmtdHost)
	if err != nil {
		return Health{}, err
	}
	script := transport.NewScript().Set("cli", CLIPath).
		Text(`[ -x "$cli" ] || { echo "$cli is not installed (package `+CLIPackage+`)" >&2; exit 127; }`).
		Command(CLIPath, "health", "check", "--mgmtd-addr", addr).String()
	res, err := ex.Sudo(ctx, script, nil)
	var exit *transport.ExitError
	if err != nil && !errors.As(err, &exit) {
		return Health{}, fmt.Errorf("beegfs health check: %w", err)
	}
	h := Health{Passed: err == nil, Failing: failingChecks(string(res.Stdout))}
	if exit != nil {
		if line := strings.TrimSpace(exit.Stderr); line != "" && line != errChecksFailed {
			h.Failing = append(h.Failing, line)
		} else if len(h.Failing) == 0 {
			h.Failing = append(h.Failing, fmt.Sprintf("beegfs health check exited with status %d", exit.Status))
		}
	}
	return h, nil
}

func failingChecks(out string) []string {
	var failing []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		for _, mark := range healthMarks {
			if strings.HasPrefix(line, mark) {
				failing = append(failing, line)
				break
			}
		}
	}
	return failing
}
