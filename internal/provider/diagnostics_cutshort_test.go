package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The advice of the steps the issue saw cut short, each of which assumes the step ran to its end.
var stepAdvice = []string{"Fix the setting the message names", "repair a line edited by hand", "Install ufw", "Check sudo scontrol", "Check the node's /etc/passwd"}

func assertNoStepAdvice(t *testing.T, detail string) {
	t.Helper()
	for _, a := range stepAdvice {
		if strings.Contains(detail, a) {
			t.Errorf("detail gives the step's advice %q:\n%s", a, detail)
		}
	}
}

// A lost connection, wrapped as the domain packages and the helpers wrap it, is reported as a
// lost connection to the node it was lost to, with what was done and what to run next, and none
// of the advice of the step it cut short.
func TestLostConnectionIsReportedAsSuch(t *testing.T) {
	lost := &transport.ConnectionLostError{Node: "gpu01", During: transport.Activity{Verb: "Creating", Object: "alice"},
		Err: errors.New("command on gpu01 (10.0.0.11:22) did not complete: the root shell ended on gpu01: the session closed")}
	wrapped := fmt.Errorf("read ledger: %w", fmt.Errorf("read /var/lib/gpucluster/uid-ledger on gpu01: %w", lost))
	for name, d := range map[string]diag.Diagnostic{
		"ledger":   nodeError("Cannot Read UID Ledger", "gpu01", "Reading the ledger failed", "Nothing was changed. repair a line edited by hand, then run Terraform again.", wrapped),
		"slurm":    nodeAttributeError(path.Root("controller"), "Slurm Configuration Refused", "gpu01", "Checking failed", "The plan stops here. Fix the setting the message names.", wrapped),
		"firewall": firewallReadError("gpu01", wrapped),
		"connect":  connectError("gpu01", wrapped),
	} {
		t.Run(name, func(t *testing.T) {
			if d.Summary() != "Connection To gpu01 Lost While Creating alice" {
				t.Errorf("summary %q", d.Summary())
			}
			for _, want := range []string{"ended while creating alice", "may be partly applied on gpu01", "Check that gpu01 is up", "run the same apply again", "Original Error: "} {
				if !strings.Contains(d.Detail(), want) {
					t.Errorf("detail lacks %q:\n%s", want, d.Detail())
				}
			}
			assertNoStepAdvice(t, d.Detail())
		})
	}
}

// A connection lost to the jump host is reported as lost to the jump host, on the node whose
// step it cut short.
func TestLostConnectionNamesTheNodeItWasLostTo(t *testing.T) {
	err := &transport.ConnectionLostError{Node: "login01", Err: errors.New("EOF")}
	d := nodeError("Cannot Create User", "gpu02", "useradd failed", "Check the node's /etc/passwd", err)
	if d.Summary() != "Connection To login01 Lost" || !strings.Contains(d.Detail(), "on node gpu02") {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
	assertNoStepAdvice(t, d.Detail())
}

// Ctrl-C is reported as an interruption of the Terraform command the request belongs to: an
// apply may have changed part of what it meant to, a plan or a read changed nothing. The
// first error on a node says so; later ones on the node are one line pointing back to it.
func TestInterruptionIsReportedOncePerNode(t *testing.T) {
	tests := []struct {
		verb, summary, state string
	}{
		{"Creating", "Apply Interrupted", "may be partly applied on node-"},
		{"Deleting", "Apply Interrupted", "may be partly applied on node-"},
		{"Planning", "Plan Interrupted", "Nothing was changed on node-"},
		{"Reading", "Read Interrupted", "Nothing was changed on node-"},
		{"", "Run Interrupted", "may be partly applied on node-"},
	}
	for _, tt := range tests {
		t.Run(tt.summary+" "+tt.verb, func(t *testing.T) {
			pool, cfg := stalledNode(t)
			ctx, cancel := context.WithCancel(transport.WithActivity(context.Background(), transport.Activity{Verb: tt.verb, Object: "alice"}))
			cancel()
			_, err := pool.Host(ctx, cfg)
			first := connectError(cfg.Name, err)
			_, err = pool.Host(ctx, cfg)
			later := nodeError("Slurm Configuration Refused", cfg.Name, "Checking failed", "Fix the setting the message names.", fmt.Errorf("preview: %w", err))
			if first.Summary() != tt.summary || later.Summary() != tt.summary {
				t.Errorf("summaries %q then %q, want %q", first.Summary(), later.Summary(), tt.summary)
			}
			if !strings.Contains(first.Detail(), tt.state) || !strings.Contains(first.Detail(), "Original Error: ") {
				t.Errorf("first detail lacks %q:\n%s", tt.state, first.Detail())
			}
			if strings.Count(later.Detail(), "\n") > 0 || !strings.Contains(later.Detail(), "Not finished on node "+cfg.Name) {
				t.Errorf("later detail is not one line pointing back:\n%s", later.Detail())
			}
			assertNoStepAdvice(t, first.Detail()+later.Detail())
		})
	}
}

// A resource's timeouts block is a deadline, not Ctrl-C: it is named as a timeout.
func TestDeadlineIsReportedAsATimeout(t *testing.T) {
	pool, cfg := stalledNode(t)
	ctx, cancel := context.WithDeadline(transport.WithActivity(context.Background(), transport.Activity{Verb: "Updating", Object: "gpu"}), time.Now())
	defer cancel()
	_, err := pool.Host(ctx, cfg)
	d := nodeError("Cannot Drain Or Resume Node", cfg.Name, "scontrol failed", "Check sudo scontrol show node", err)
	if d.Summary() != "Timeout Reached While Updating gpu" || !strings.Contains(d.Detail(), "timeouts block") {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
	assertNoStepAdvice(t, d.Detail())
}

// The activation's own choice of advice stays for a failure that is not cut short.
func TestRefusalKeepsItsAdvice(t *testing.T) {
	err := &slurm.RefusedError{Err: errors.New("slurmctld -t: PartitionName=gpu: bad MaxTime")}
	d := nodeError("Cannot Activate Slurm Configuration", "login01", "Activating failed", slurmActivationAdvice(err), err)
	if !strings.Contains(d.Detail(), "Fix the setting the message names") {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
}

// stalledNode is a node whose SSH handshake never completes, so a dial to it is in progress
// for as long as a test runs, and a pool with its config.
func stalledNode(t *testing.T) (*transport.Pool, transport.Config) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("listener address %v is not TCP", ln.Addr())
	}
	pool := transport.NewPool()
	t.Cleanup(pool.Close)
	return pool, transport.Config{Name: fmt.Sprintf("node-%d", addr.Port), Address: "127.0.0.1", Port: addr.Port, User: "admin",
		KnownHostsFile: "/dev/null", UseAgent: true, ConnectTimeout: time.Minute}
}

// A step whose failure is only a warning reports work cut short as such too, still as a warning.
func TestWarningOfWorkCutShortNamesTheCause(t *testing.T) {
	err := fmt.Errorf("restart slurmd: %w", &transport.ConnectionLostError{Node: "gpu03", During: transport.Activity{Verb: "Updating", Object: "gpu"}, Err: errors.New("EOF")})
	d := nodeWarning("Slurmd Not Restarted", "gpu03", "The node could not be reached to restart slurmd", "The next apply retries once the node is up.", err)
	a := nodeAttributeWarning(path.Root("nodes"), "Slurmd Not Restarted", "gpu03", "The node could not be reached to restart slurmd", "The next apply retries once the node is up.", err)
	for _, d := range []diag.Diagnostic{d, a} {
		if d.Severity() != diag.SeverityWarning || d.Summary() != "Connection To gpu03 Lost While Updating gpu" || strings.Contains(d.Detail(), "could not be reached") {
			t.Errorf("%s %s: %s", d.Severity(), d.Summary(), d.Detail())
		}
	}
}
