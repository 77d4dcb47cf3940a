package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Each diagnostic names the cause that happened, not another one: a lost connection is not a
// missing ufw, an apply stopped at the lock wrote nothing, port 0 is said once.
func TestDiagnosticsNameTheRealCause(t *testing.T) {
	lost := fmt.Errorf("read UFW state: %w", errors.New("command on gpu01 (10.0.0.11:22) did not complete: connection lost"))
	missing := fmt.Errorf("read UFW state: %w: %w", firewall.ErrNotInstalled, &transport.ExitError{Host: "gpu01", Status: 3, Stderr: "ufw is not installed (Debian package ufw)"})
	_, portErr := firewall.Rule{Port: "0"}.Normalize()
	notLocked := fmt.Errorf("slurm activation: wait for the lock of login01: %w: %w", transport.ErrNotLocked, context.Canceled)
	tests := []struct {
		name, got, want, not string
	}{
		{"lost connection reading UFW", firewallReadError("gpu01", lost).Detail(), "Nothing was changed", "Install ufw"},
		{"ufw missing", firewallReadError("gpu01", missing).Detail(), "Install ufw on the node", "Cannot Read"},
		{"port 0", ruleDiags(portErr)[0].Detail(), "port 0 is out of range", "port port"},
		{"activation stopped at the lock", slurmActivationAdvice(notLocked), "Nothing was read or written", "partly written"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, tt.want) || strings.Contains(tt.got, tt.not) {
			t.Errorf("%s: %q, want %q and not %q", tt.name, tt.got, tt.want, tt.not)
		}
	}
}

// A step that fails because the node could not be reached reports the connection, not the step.
func TestStepOnUnreachableNodeReportsTheConnection(t *testing.T) {
	pool := transport.NewPool()
	defer pool.Close()
	_, err := pool.Host(context.Background(), transport.Config{Name: "gpu01", Address: "127.0.0.1", Port: 1, User: "admin", KnownHostsFile: "/dev/null", UseAgent: true})
	first := nodeError("Cannot Read Firewall", "gpu01", "Reading UFW's files failed", adviceRead, err)
	second := nodeError("Cannot Read Firewall", "gpu01", "Reading UFW's files failed", adviceRead, err)
	if first.Summary() != "Cannot Connect To Node" || second.Summary() != "Node Unreachable" {
		t.Errorf("summaries %q then %q, want Cannot Connect To Node then Node Unreachable", first.Summary(), second.Summary())
	}
}
