package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
)

// Only a resource whose state says false is unrecorded: state from before `recorded` existed
// (null) was recorded by the import or create that wrote it.
func TestUnrecorded(t *testing.T) {
	for _, tc := range []struct {
		recorded types.Bool
		want     bool
	}{
		{types.BoolValue(false), true},
		{types.BoolValue(true), false},
		{types.BoolNull(), false},
		{types.BoolUnknown(), false},
	} {
		if got := unrecorded(firewallRuleModel{Recorded: tc.recorded}); got != tc.want {
			t.Errorf("unrecorded with recorded %s = %v, want %v", tc.recorded, got, tc.want)
		}
	}
}

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
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "gpucluster_firewall_rule",
		RawState: &tfprotov6.RawState{JSON: []byte(`{"id":"gpu01:allow:6818/tcp:from=10.0.0.0/24","node":"gpu01","action":"allow",` +
			`"port":"6818","proto":"tcp","from":"10.0.0.0/24","comment":"slurmd","adopted":true}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	attrs := map[string]tftypes.Type{"adopted": tftypes.Bool, "recorded": tftypes.Bool}
	for _, name := range []string{"id", "node", "action", "port", "proto", "from", "comment"} {
		attrs[name] = tftypes.String
	}
	upgraded, err := resp.UpgradedState.Unmarshal(tftypes.Object{AttributeTypes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]tftypes.Value
	if err := upgraded.As(&values); err != nil {
		t.Fatal(err)
	}
	if !values["recorded"].IsNull() {
		t.Errorf("recorded = %v in state from before it existed, want null", values["recorded"])
	}
	if !values["adopted"].Equal(tftypes.NewValue(tftypes.Bool, true)) {
		t.Errorf("adopted = %v, want the state's true", values["adopted"])
	}
}
