package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
)

// Recording is refused only when the ledger already lists the very rule.
func TestRecordedElsewhere(t *testing.T) {
	rule, err := firewall.Rule{Action: firewall.ActionAllow, Port: "6818", Proto: firewall.ProtoTCP, From: "10.0.0.0/24"}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	other := "allow:6817/tcp:from=10.0.0.0/24"
	if d := recordedElsewhere(firewall.State{Owned: []string{other}}, "gpu01", rule); d.HasError() {
		t.Errorf("refused with only %s in the ledger: %v", other, d)
	}
	d := recordedElsewhere(firewall.State{Owned: []string{other, rule.Key()}}, "gpu01", rule)
	if !d.HasError() || d[0].Summary() != "Firewall Rule Already Managed" {
		t.Errorf("the ledger lists %s, want Firewall Rule Already Managed, got %v", rule.Key(), d)
	}
}

// State written before `recorded` existed needs no state upgrade of its own: the framework
// reads the attribute as null (which unrecorded counts as recorded), and Read then fills it
// from the ledger.
func TestFirewallRuleStateWithoutRecorded(t *testing.T) {
	values := upgradedState(t, "gpucluster_firewall_rule", `{"id":"gpu01:allow:6818/tcp:from=10.0.0.0/24","node":"gpu01","action":"allow",`+
		`"port":"6818","proto":"tcp","from":"10.0.0.0/24","comment":"slurmd","adopted":true}`)
	if !values["recorded"].IsNull() {
		t.Errorf("recorded = %v in state from before it existed, want null", values["recorded"])
	}
	if !values["adopted"].Equal(tftypes.NewValue(tftypes.Bool, true)) {
		t.Errorf("adopted = %v, want the state's true", values["adopted"])
	}
}
