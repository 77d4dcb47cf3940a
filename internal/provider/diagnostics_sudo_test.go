package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// A sudo refusal is explained by the first step it stops on the node; every later step gets
// the short "Sudo Refused Earlier", the same for every step, so one resource's steps on one
// node add one copy of it.
func TestSudoRefusalExplainedOncePerNode(t *testing.T) {
	refusal := &transport.SudoError{Host: "gpu01", User: "admin", Exe: "sudo", Kind: transport.SudoAccountLocked, Faillock: &transport.FaillockTally{Failures: 3, Deny: 3}}
	first := nodeError("Cannot Read Accounts", "gpu01", "Reading accounts failed", adviceRead, fmt.Errorf("read accounts: %w", refusal))
	if first.Summary() != "Account Locked" || !strings.Contains(first.Detail(), "As root on gpu01, run faillock --user admin --reset") {
		t.Errorf("first report %q: %s", first.Summary(), first.Detail())
	}
	var diags diag.Diagnostics
	diags.Append(nodeError("Cannot Read Accounts", "gpu01", "Reading accounts failed", adviceRead, fmt.Errorf("read accounts: %w", refusal)))
	diags.Append(nodeError("Cannot Read UID Ledger", "gpu01", "Reading the ledger failed", adviceRead, fmt.Errorf("read UID ledger: %w", refusal)))
	if len(diags) != 1 || diags[0].Summary() != "Sudo Refused Earlier" || strings.Contains(diags[0].Detail(), "faillock") {
		t.Errorf("later reports: %v, want one short Sudo Refused Earlier", diags)
	}
}

func TestSudoAdviceByCause(t *testing.T) {
	tests := []struct {
		kind       transport.SudoErrorKind
		summary    string
		wantInTodo string
	}{
		{transport.SudoWrongPassword, "Sudo Password Rejected", "tries the password once per node per run"},
		{transport.SudoNotAllowed, "Sudo Not Allowed", "sudoers refuses it"},
		{transport.SudoPasswordRequired, "Sudo Needs A Password", "Set sudo_password"},
		{transport.SudoFailed, "Sudo Failed", "sudo_exe names an installed sudo"},
	}
	for _, tt := range tests {
		summary, todo := sudoAdvice("Cannot Read Accounts", adviceRead, &transport.SudoError{Host: "gpu01", User: "admin", Exe: "sudo", Kind: tt.kind})
		if summary != tt.summary || !strings.Contains(todo, tt.wantInTodo) {
			t.Errorf("kind %d: %q %q, want %q with %q", tt.kind, summary, todo, tt.summary, tt.wantInTodo)
		}
	}
}
