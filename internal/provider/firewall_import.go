package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// A firewall's rules and slurm_controller live only in the configuration. An import reads them
// from the node in the one form the docs give, so that the configuration of a firewall found
// running (every rule of the node in rules, ssh_rule unset) plans empty: Terraform plans a
// change for any configured value the imported state lacks.

// importedRuleIDs lists every rule on the node, as rules holds them.
func importedRuleIDs(node string, rules []firewall.Rule) types.Set {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = firewall.ID(node, r)
	}
	slices.Sort(ids)
	return stringSet(ids)
}

// importedSlurmController names the node itself when slurmctld is enabled there, else, when
// slurmd is, the controller it takes its configuration from (--conf-server in
// /etc/default/slurmd), else null.
func importedSlurmController(ctx context.Context, h *transport.Host, node string) (types.String, diag.Diagnostics) {
	roles, err := nodes.Roles(ctx, h)
	if err != nil {
		return types.StringNull(), diag.Diagnostics{nodeError("Cannot Import Firewall", node, "Reading whether slurmctld is enabled failed", adviceRead, err)}
	}
	if slices.Contains(roles, "controller") {
		return types.StringValue(node), nil
	}
	if !slices.Contains(roles, "compute") {
		return types.StringNull(), nil
	}
	controller, found, err := slurm.ReadConfServer(ctx, h)
	if err != nil {
		return types.StringNull(), diag.Diagnostics{nodeError("Cannot Import Firewall", node, "Reading "+slurm.SlurmdDefaultsPath+" failed", adviceRead, err)}
	}
	if !found {
		return types.StringNull(), nil
	}
	return types.StringValue(controller), nil
}

// undeclaredRules lists, as rule ids, the rules on the node that no gpucluster_firewall_rule
// owns: made by hand, or by a tool other than this provider.
func (c *cluster) undeclaredRules(node string, st firewall.State) []string {
	var ids []string
	for _, r := range st.Undeclared(c.firewallPlans.declaredOn(c.canonicalNode(node))) {
		ids = append(ids, firewall.ID(node, r))
	}
	return ids
}

// warnUndeclared names each rule on the node that nobody declares: it admits traffic that no
// configuration shows.
func warnUndeclared(diags *diag.Diagnostics, node string, ids []string, st firewall.State) {
	if len(ids) == 0 {
		return
	}
	lines := make([]string, len(ids))
	for i, id := range ids {
		_, rule, _ := firewall.ParseID(id)
		found, _ := firewall.Find(st.Rules, rule.Key())
		lines[i] = "  " + id
		if found.Comment != "" {
			lines[i] += " (" + found.Comment + ")"
		}
	}
	diags.AddAttributeWarning(path.Root("undeclared_rules"), "Undeclared Firewall Rules",
		fmt.Sprintf("UFW on %s has rules that no gpucluster_firewall_rule declares (none is in %s), so no configuration shows the traffic they admit:\n%s\n\n"+
			"Import each one that should stay (terraform import gpucluster_firewall_rule.NAME ID) or declare it; delete the others on the node (sudo ufw delete ...).",
			node, firewall.LedgerPath, strings.Join(lines, "\n")))
}

// planExclusive shows the undeclared rules going and refuses, before anything changes, an
// exclusive firewall whose remaining rules would drop the provider's connection.
func (r *firewallResource) planExclusive(ctx context.Context, resp *resource.ModifyPlanResponse, plan firewallModel) diag.Diagnostics {
	node := plan.Node.ValueString()
	h, st, diags := r.cluster.firewallState(ctx, node)
	if diags.HasError() {
		return diags
	}
	undeclared := st.Undeclared(r.cluster.firewallPlans.declaredOn(r.cluster.canonicalNode(node)))
	diags.Append(resp.Plan.SetAttribute(ctx, path.Root("undeclared_rules"), stringSet(nil))...)
	if len(undeclared) == 0 {
		return diags
	}
	listed, d := r.listedRules(ctx, plan)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	gone := ruleKeys(undeclared)
	for _, rule := range listed {
		if gone[rule.Key()] {
			diags.AddAttributeError(path.Root("rules"), "Listed Rule Not Declared",
				fmt.Sprintf("%s is listed for %s, but no gpucluster_firewall_rule declares it, so exclusive would delete it. "+
					"Import or declare it as a gpucluster_firewall_rule and list that resource's id, or drop it from the list. Nothing was changed.", firewall.ID(node, rule), node))
		}
	}
	if diags.HasError() {
		return diags
	}
	stay := slices.Concat(withoutKeys(st.Rules, gone), listed)
	diags.Append(refuseLockout(ctx, h, node, stay, plan.Enabled.ValueBool(), plan.DefaultIncoming.ValueString(),
		"deleting the undeclared rules "+strings.Join(keysOf(undeclared), ", "), path.Root("exclusive"), declareRuleAdvice)...)
	return diags
}

// deleteUndeclared deletes, under the node's lock the caller holds, the rules nobody declares,
// once the rules that stay are shown to keep the provider connected; st is left without them.
func (r *firewallResource) deleteUndeclared(ctx context.Context, h *transport.Host, node string, st *firewall.State, enabled bool, incoming string) diag.Diagnostics {
	undeclared := st.Undeclared(r.cluster.firewallPlans.declaredOn(r.cluster.canonicalNode(node)))
	if len(undeclared) == 0 {
		return nil
	}
	stay := withoutKeys(st.Rules, ruleKeys(undeclared))
	if d := refuseLockout(ctx, h, node, stay, enabled, incoming, "deleting the undeclared rules "+strings.Join(keysOf(undeclared), ", "),
		path.Root("exclusive"), declareRuleAdvice); d.HasError() {
		return d
	}
	for _, rule := range undeclared {
		if err := firewall.Delete(ctx, h, rule); err != nil {
			return diag.Diagnostics{nodeError("Cannot Delete Undeclared Firewall Rule", node, "Deleting "+rule.Key()+" with ufw failed; the rules before it in undeclared_rules are gone",
				"Delete it by hand (sudo ufw delete ...) or import it, then apply again.", err)}
		}
	}
	st.Rules = stay
	return nil
}

func ruleKeys(rules []firewall.Rule) map[string]bool {
	keys := make(map[string]bool, len(rules))
	for _, r := range rules {
		keys[r.Key()] = true
	}
	return keys
}

func keysOf(rules []firewall.Rule) []string {
	keys := make([]string, len(rules))
	for i, r := range rules {
		keys[i] = r.Key()
	}
	return keys
}
