package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

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
