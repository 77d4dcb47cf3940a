package provider

import (
	"context"
	"crypto/rand"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// firewallPlans are the firewall changes planned in this run, by node, so that each
// resource's check sees what the others change: a rule declared twice, the rules removed
// together, and whether UFW filters at all once the firewall resource's plan is applied.
// Every plan and apply configures the provider anew, so each run starts empty.
type firewallPlans struct {
	mu sync.Mutex
	// owners holds, by rule ID, the plan tokens of the resources that declare the rule.
	owners map[string]map[string]bool
	// priors holds, by plan token, the prior state of the resource whose plan issued it.
	priors   map[string]firewallRuleModel
	removed  map[string]map[string]bool
	released map[string]map[string]bool
	// held holds, by node, the rules of the resources in state that this run refreshed.
	held     map[string]map[string]bool
	switches map[string]firewallSwitch
	// pending holds, by node, the rule removals whose lockout check waits for the node's
	// gpucluster_firewall, planned later in this run.
	pending map[string]map[string]string
}

// firewallSwitch is UFW's switch and incoming policy on a node as a gpucluster_firewall plans them.
type firewallSwitch struct {
	enabled  bool
	incoming string
}

// declare records a planned rule under the plan token of the resource that plans it, and
// reports whether another resource in this run plans it too.
func (f *firewallPlans) declare(node string, rule firewall.Rule, token string) (duplicate bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.owners == nil {
		f.owners = map[string]map[string]bool{}
	}
	id := firewall.ID(node, rule)
	if f.owners[id] == nil {
		f.owners[id] = map[string]bool{}
	}
	f.owners[id][token] = true
	return len(f.owners[id]) > 1
}

// declaredOn tells, by rule key, whether a resource in this run declares the rule on node.
func (f *firewallPlans) declaredOn(node string) func(key string) bool {
	return func(key string) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.owners[node+":"+key]) > 0
	}
}

// issue returns a new plan token for a resource planned with its prior state.
func (f *firewallPlans) issue(prior firewallRuleModel) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.priors == nil {
		f.priors = map[string]firewallRuleModel{}
	}
	token := rand.Text()
	f.priors[token] = prior
	return token
}

// priorOf returns the prior state behind a token this run issued.
func (f *firewallPlans) priorOf(token string) (firewallRuleModel, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prior, ok := f.priors[token]
	return prior, ok
}

// release records a rule key whose resource this run deletes or replaces: the ledger entry
// that makes the rule another resource's goes with it.
func (f *firewallPlans) release(node, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	addKey(&f.released, node, key)
}

// hold records that a resource in state holds the rule key on node, as this run's refresh found.
func (f *firewallPlans) hold(node, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	addKey(&f.held, node, key)
}

// isHeld reports whether a resource in state holds the rule key on node.
func (f *firewallPlans) isHeld(node, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held[node][key]
}

// isReleased reports whether this run releases the rule key on node.
func (f *firewallPlans) isReleased(node, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.released[node][key]
}

func addKey(m *map[string]map[string]bool, node, key string) {
	if *m == nil {
		*m = map[string]map[string]bool{}
	}
	if (*m)[node] == nil {
		(*m)[node] = map[string]bool{}
	}
	(*m)[node][key] = true
}

// remove records a rule that this run deletes from a node and returns every rule key removed
// from that node so far. Of two removals that each leave SSH open but together do not, the
// later one sees both.
func (f *firewallPlans) remove(node, key string) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	addKey(&f.removed, node, key)
	return maps.Clone(f.removed[node])
}

// removedFrom returns the rule keys this run removes from a node.
func (f *firewallPlans) removedFrom(node string) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.removed[node])
}

// setSwitch records UFW's switch and incoming policy on a node after this run, and returns
// the rule removals that waited for it: what each does ("deleting KEY"), by rule key.
func (f *firewallPlans) setSwitch(node string, sw firewallSwitch) (pending map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.switches == nil {
		f.switches = map[string]firewallSwitch{}
	}
	f.switches[node] = sw
	pending = f.pending[node]
	delete(f.pending, node)
	return pending
}

// waitForFirewall records, on a node whose UFW a gpucluster_firewall manages and whose firewall
// this run has not planned yet, the removal of key (change says what it does) for that
// firewall's plan to check, and reports whether it did.
func (f *firewallPlans) waitForFirewall(node, key, change string, managed bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, planned := f.switches[node]; planned || !managed {
		return false
	}
	if f.pending == nil {
		f.pending = map[string]map[string]string{}
	}
	if f.pending[node] == nil {
		f.pending[node] = map[string]string{}
	}
	f.pending[node][key] = change
	return true
}

// plannedSwitch returns UFW's switch and incoming policy on a node after this run: what the
// node's gpucluster_firewall plans, else what the node has.
func (f *firewallPlans) plannedSwitch(node string, st firewall.State) firewallSwitch {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sw, planned := f.switches[node]; planned {
		return sw
	}
	return firewallSwitch{enabled: st.Enabled, incoming: st.Incoming}
}

// withoutKeys returns rules without those whose keys are in removed.
func withoutKeys(rules []firewall.Rule, removed map[string]bool) []firewall.Rule {
	return slices.DeleteFunc(slices.Clone(rules), func(r firewall.Rule) bool { return removed[r.Key()] })
}

// planKind is how a resource plans one thing it declares: Terraform plans a replacement twice,
// first with the prior state, then the create half without it, and every other resource once.
type planKind int

const (
	planCreate  planKind = iota // no prior state
	planReplace                 // prior state, and a changed attribute forces a new object
	planUpdate                  // prior state, kept in place
)

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
	h, st, diags := c.firewallState(ctx, node)
	if diags.HasError() {
		return diags
	}
	if c.firewallPlans.waitForFirewall(canonical, rule.Key(), change, st.Managed) {
		return nil
	}
	sw := c.firewallPlans.plannedSwitch(canonical, st)
	return refuseLockout(ctx, h, node, withoutKeys(st.Rules, removed), sw.enabled, sw.incoming, change, path.Empty(), keepRuleAdvice)
}

// checkWaitingRemovals is the lockout check of the rule removals that waited for the node's
// gpucluster_firewall, with what it plans (sw). Terraform removes the rules the firewall
// listed (listed, from its prior state) only after it changed or destroyed the firewall, the
// others in any order: those must keep SSH open under UFW as it is now, and all of them under sw.
func (c *cluster) checkWaitingRemovals(ctx context.Context, node string, waiting map[string]string, sw firewallSwitch, listed map[string]bool) diag.Diagnostics {
	if len(waiting) == 0 || !c.settingsKnown() {
		return nil
	}
	h, st, diags := c.firewallState(ctx, node)
	if diags.HasError() {
		return diags
	}
	removed := c.firewallPlans.removedFrom(c.canonicalNode(node))
	unlisted := maps.Clone(removed)
	maps.DeleteFunc(unlisted, func(key string, _ bool) bool { return listed[key] })
	var changes []string
	for _, key := range slices.Sorted(maps.Keys(waiting)) {
		changes = append(changes, waiting[key])
	}
	change := strings.Join(changes, ", ")
	if d := refuseLockout(ctx, h, node, withoutKeys(st.Rules, unlisted), st.Enabled, st.Incoming, change, path.Empty(), keepRuleAdvice); d.HasError() {
		return d
	}
	return refuseLockout(ctx, h, node, withoutKeys(st.Rules, removed), sw.enabled, sw.incoming, change, path.Empty(), keepRuleAdvice)
}

// checkDenyRule refuses at plan a deny rule that would match the provider's own SSH connection
// before any allow rule does. UFW appends a new rule after the others, so it only matters when
// no earlier rule matches the connection.
func (c *cluster) checkDenyRule(ctx context.Context, node string, rule firewall.Rule, h *transport.Host, st firewall.State) diag.Diagnostics {
	canonical := c.canonicalNode(node)
	sw := c.firewallPlans.plannedSwitch(canonical, st)
	rules := append(withoutKeys(st.Rules, c.firewallPlans.removedFrom(canonical)), rule)
	return refuseLockout(ctx, h, node, rules, sw.enabled, sw.incoming, "adding "+rule.Key(), path.Root("action"), denyRuleAdvice)
}

// switchPlanned records what UFW on node does after this run, for the rules' checks, and checks
// the rule removals that waited for it; prior is the firewall's state, null on create.
func (r *firewallResource) switchPlanned(ctx context.Context, node string, prior tfsdk.State, sw firewallSwitch) diag.Diagnostics {
	waiting := r.cluster.firewallPlans.setSwitch(r.cluster.canonicalNode(node), sw)
	if len(waiting) == 0 {
		return nil
	}
	var diags diag.Diagnostics
	listed := map[string]bool{}
	if m := priorModel[firewallModel](ctx, prior, &diags); !prior.Raw.IsNull() && !diags.HasError() {
		rules, more := r.listedRules(ctx, m)
		diags.Append(more...)
		for _, rule := range rules {
			listed[rule.Key()] = true
		}
	}
	if diags.HasError() {
		return diags
	}
	return r.cluster.checkWaitingRemovals(ctx, node, waiting, sw, listed)
}

// markManaged leaves the marker that tells the rules' plans this resource manages UFW here.
func markManaged(ctx context.Context, h *transport.Host, node string, st firewall.State) diag.Diagnostics {
	if st.Managed {
		return nil
	}
	if err := firewall.MarkManaged(ctx, h); err != nil {
		return diag.Diagnostics{nodeError("Cannot Configure Firewall", node, "Writing "+firewall.ManagedPath+" failed after UFW was configured", "Apply again.", err)}
	}
	return nil
}
