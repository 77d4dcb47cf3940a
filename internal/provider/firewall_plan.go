package provider

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
)

// firewallPlans are the firewall changes planned in this run, by node, so that each
// resource's check sees what the others change: a rule declared twice, the rules removed
// together, and whether UFW filters at all once the firewall resource's plan is applied.
// Every plan and apply configures the provider anew, so each run starts empty.
type firewallPlans struct {
	mu       sync.Mutex
	declared map[string]planCounts
	removed  map[string]map[string]bool
	filters  map[string]bool
}

// declare records a planned rule, node and key, and reports whether another resource in this
// run plans it too. The create half of a replacement is the same resource, not another.
func (f *firewallPlans) declare(node string, rule firewall.Rule, kind planKind) (duplicate bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.declared == nil {
		f.declared = map[string]planCounts{}
	}
	id := firewall.ID(node, rule)
	counts := f.declared[id]
	counts[kind]++
	f.declared[id] = counts
	return counts.resources() > 1
}

// remove records a rule that this run deletes from a node and returns every rule key removed
// from that node so far. Of two removals that each leave SSH open but together do not, the
// later one sees both.
func (f *firewallPlans) remove(node, key string) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed == nil {
		f.removed = map[string]map[string]bool{}
	}
	if f.removed[node] == nil {
		f.removed[node] = map[string]bool{}
	}
	f.removed[node][key] = true
	return maps.Clone(f.removed[node])
}

// removedFrom returns the rule keys this run removes from a node.
func (f *firewallPlans) removedFrom(node string) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.removed[node])
}

// setFilters records whether UFW filters incoming traffic on a node after this run.
func (f *firewallPlans) setFilters(node string, filters bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.filters == nil {
		f.filters = map[string]bool{}
	}
	f.filters[node] = filters
}

// plannedFilters reports what the node's gpucluster_firewall plans, when this run plans it.
func (f *firewallPlans) plannedFilters(node string) (filters, planned bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	filters, planned = f.filters[node]
	return filters, planned
}

// withoutKeys returns rules without those whose keys are in removed.
func withoutKeys(rules []firewall.Rule, removed map[string]bool) []firewall.Rule {
	return slices.DeleteFunc(slices.Clone(rules), func(r firewall.Rule) bool { return removed[r.Key()] })
}

// rulePlanKind tells a replacement from an update by the attributes that force one.
func rulePlanKind(plan, state firewallRuleModel, creating bool) planKind {
	switch {
	case creating:
		return planCreate
	case !plan.Node.Equal(state.Node) || !plan.Action.Equal(state.Action) || !plan.Port.Equal(state.Port) ||
		!plan.Proto.Equal(state.Proto) || !plan.From.Equal(state.From):
		return planReplace
	default:
		return planUpdate
	}
}

// checkRuleRemoval refuses at plan the removal of a rule that, with the other removals this
// run plans on the node, would leave no rule admitting the provider's own SSH connection.
// The rules this run adds do not count: Terraform deletes a replaced rule before it creates
// the successor, and orders unrelated resources freely, so only rules already on the node
// are sure to be there when the rule goes.
func (c *cluster) checkRuleRemoval(ctx context.Context, node string, rule firewall.Rule, change string) diag.Diagnostics {
	canonical := c.canonicalNode(node)
	removed := c.firewallPlans.remove(canonical, rule.Key())
	filters, planned := c.firewallPlans.plannedFilters(canonical)
	if planned && !filters {
		return nil
	}
	h, st, diags := c.firewallState(ctx, node)
	if diags.HasError() {
		return diags
	}
	return refuseLockout(ctx, h, node, withoutKeys(st.Rules, removed), st.Enabled, st.Incoming, change, path.Empty(), keepRuleAdvice)
}

// keepRuleAdvice is what to do when removing a rule would lock the provider out.
func keepRuleAdvice(node string, conn firewall.Connection) string {
	return "Nothing was changed on the node. Keep this rule until another one admits the connection: declare that rule, apply, and only then remove this one " +
		"(Terraform deletes a replaced rule before it adds the new one, so the rule that admits SSH cannot be replaced in one apply). For example:\n\n" +
		sshRuleExample(node, conn)
}

// declareRuleAdvice is what to do when enabling UFW would lock the provider out.
func declareRuleAdvice(node string, conn firewall.Connection) string {
	return "Nothing was changed. Declare the rule first and refer to it from gpucluster_firewall.ssh_rule (or depends_on):\n\n" + sshRuleExample(node, conn)
}
