package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
)

// The ownership checks of gpucluster_firewall_rule: each rule on a node belongs to one resource,
// which the node's ledger records.

// ownedElsewhere refuses a rule that is on the node and listed in its ledger: another resource
// manages it. A listed rule that is gone was deleted by hand; its owner recreates it, so taking
// it over is safe.
func ownedElsewhere(st firewall.State, node string, rule firewall.Rule) diag.Diagnostics {
	var diags diag.Diagnostics
	if _, present := firewall.Find(st.Rules, rule.Key()); present && st.Owns(rule.Key()) {
		diags.AddAttributeError(path.Root("port"), "Firewall Rule Already Managed",
			fmt.Sprintf("The rule %s on node %s is already managed by another gpucluster_firewall_rule (it is listed in %s). Two resources would fight over one rule, and destroying one would remove the other's rule.\n\n%s",
				rule.Key(), node, firewall.LedgerPath, ruleOwnedAdvice))
	}
	return diags
}

// recordedElsewhere refuses to record the rule of an unrecorded resource that the ledger already
// lists: a resource in another state took the rule since this one was imported.
func recordedElsewhere(st firewall.State, node string, rule firewall.Rule) diag.Diagnostics {
	if !st.Owns(rule.Key()) {
		return nil
	}
	return diag.Diagnostics{importOwnedRule(node, rule.Key())}
}

// importOwnedRule refuses a rule the ledger lists already, at import and at the apply that
// records an imported rule.
func importOwnedRule(node, key string) diag.Diagnostic {
	return nodeError("Firewall Rule Already Managed", node,
		fmt.Sprintf("The rule %s is listed in %s: a gpucluster_firewall_rule in another state (or in this one) already manages it, "+
			"and importing it a second time would let either state's destroy remove the other's rule. Nothing was changed", key, firewall.LedgerPath),
		fmt.Sprintf("Import it only to move it: remove it from the owning state first (terraform state rm, or a removed block with destroy = false), "+
			"then hand it over by deleting its line on the node (sudo sed -i '\\|^%s$|d' %s) and import again.", key, firewall.LedgerPath), nil)
}
