package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure   = (*firewallResource)(nil)
	_ resource.ResourceWithImportState = (*firewallResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*firewallResource)(nil)
)

// NewFirewallResource returns the gpucluster_firewall resource.
func NewFirewallResource() guardedResource { return &firewallResource{} }

type firewallResource struct{ cluster *cluster }

type firewallModel struct {
	ID               types.String `tfsdk:"id"`
	Node             types.String `tfsdk:"node"`
	Enabled          types.Bool   `tfsdk:"enabled"`
	DefaultIncoming  types.String `tfsdk:"default_incoming"`
	DefaultOutgoing  types.String `tfsdk:"default_outgoing"`
	SSHRule          types.String `tfsdk:"ssh_rule"`
	Rules            types.Set    `tfsdk:"rules"`
	SlurmController  types.String `tfsdk:"slurm_controller"`
	PreviousEnabled  types.Bool   `tfsdk:"previous_enabled"`
	PreviousIncoming types.String `tfsdk:"previous_incoming"`
	PreviousOutgoing types.String `tfsdk:"previous_outgoing"`
	UndeclaredRules  types.Set    `tfsdk:"undeclared_rules"`
	Exclusive        types.Bool   `tfsdk:"exclusive"`
	Recorded         types.Bool   `tfsdk:"recorded"`
}

func (r *firewallResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_firewall"
}

func (r *firewallResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	policy := []validator.String{stringvalidator.OneOf(firewall.Policies...)}
	resp.Schema = schema.Schema{
		MarkdownDescription: "UFW's default policies and its on/off switch on one node (one resource per node). " +
			"Lockout protection: enabling UFW, or denying incoming traffic while it is enabled, is refused unless an allow " +
			"rule on the node admits the provider's own SSH connection, as the node sees it: from the jump host (login01) " +
			"on a GPU server, from the machine running Terraform on the login node. The plan refuses when the rules on the " +
			"node and `ssh_rule` show the connection would be dropped; the apply checks the rules on the node again, always. " +
			"Declare the rules first and list their ids in `rules` (the SSH rule may go in `ssh_rule` instead): the references " +
			"order them before the firewall, the plan counts them as present, and the apply refuses to enable UFW while one is " +
			"missing on the node. `depends_on` orders rules too, but the plan cannot see them.\n\nOn a Slurm node the plan also warns " +
			"when the firewall would break Slurm: when slurmd is enabled on the node but no rule admits slurmd's port from the whole " +
			"subnet of the node's address (pitfall P5), and, with `slurm_controller` set, when the controller's slurm.conf has no " +
			"`SrunPortRange` (pitfall P6).\n\nDestroy returns the node to the state found on create (disabled, or the previous " +
			"policies), and leaves UFW disabled rather than lock the provider out.",
		Attributes: map[string]schema.Attribute{
			"id":   computedKeptAttribute("The node."),
			"node": nodeAttribute("Node, by name or address."),
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether UFW filters traffic, now and at boot. Defaults to `true`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
			"default_incoming": schema.StringAttribute{
				MarkdownDescription: "Policy for incoming traffic no rule matches: " + markdownList(firewall.Policies) + ". Defaults to `deny`, as in the guide.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(firewall.PolicyDeny),
				Validators:          policy,
			},
			"default_outgoing": schema.StringAttribute{
				MarkdownDescription: "Policy for outgoing traffic: " + markdownList(firewall.Policies) + ". Defaults to `allow`, as in the guide (DNS, NTP and APT need no rules).",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(firewall.PolicyAllow),
				Validators:          policy,
			},
			"ssh_rule": schema.StringAttribute{
				MarkdownDescription: "The `id` of the `gpucluster_firewall_rule` that admits the provider's SSH connection to this node. The reference orders that rule before the firewall, and the plan checks that the rule admits the connection even before it exists.",
				Optional:            true,
			},
			"rules": schema.SetAttribute{
				MarkdownDescription: "The `id`s of the `gpucluster_firewall_rule`s on this node that must be in place before UFW is enabled. The references order them before the firewall; the plan counts them as present for the lockout and Slurm checks even before they exist, and the apply refuses to enable UFW while one is missing on the node. An import lists every rule on the node here (and leaves `ssh_rule` unset), so list them all to import with an empty plan.",
				Optional:            true,
				ElementType:         types.StringType,
			},
			"slurm_controller": schema.StringAttribute{
				MarkdownDescription: "The Slurm controller node, for example `gpucluster_slurm_controller.NAME.id`. The plan then reads its slurm.conf and warns when it has no `SrunPortRange` (pitfall P6), and checks slurmd's port from its `SlurmdPort`. The check needs slurm.conf on the controller: on the apply that creates the controller it is skipped. An import reads it from the node: the node itself when `slurmctld` is enabled there, else, when `slurmd` is, the host of `--conf-server` in /etc/default/slurmd.",
				Optional:            true,
				Validators:          []validator.String{nodeRefValidator},
			},
			"previous_enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether UFW was enabled before this resource; destroy restores it.",
				Computed:            true,
				PlanModifiers:       []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"previous_incoming": computedKeptAttribute("Incoming policy before this resource; destroy restores it."),
			"previous_outgoing": computedKeptAttribute("Outgoing policy before this resource; destroy restores it."),
			"exclusive": schema.BoolAttribute{
				MarkdownDescription: "Make the declared rules the node's only ones: the apply deletes every rule in `undeclared_rules` (the plan shows them going), " +
					"after the same lockout check as for enabling UFW, counting only the rules that stay. List the node's rules in `rules`, so they are " +
					"in place (and in the ledger) before the firewall applies; a rule the same apply would only adopt later counts as undeclared. Defaults to `false`: undeclared rules are reported, never touched.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"recorded": schema.BoolAttribute{
				MarkdownDescription: "Whether the node holds `" + firewall.ManagedPath + "`, which tells the plans of the node's rules that this resource manages UFW " +
					"there, so removing the node's rules together with this resource is checked against UFW as this resource leaves it. Create writes it; " +
					"an import (which only reads) and firewalls created by earlier versions show `recorded = false -> true` in the plan, and the apply writes the file and nothing else.",
				Computed: true,
			},
			"undeclared_rules": schema.SetAttribute{
				MarkdownDescription: "The ids of the rules on the node that no `gpucluster_firewall_rule` declares: not in the node's ownership ledger (" +
					"`" + firewall.LedgerPath + "`) nor declared in the same run. Read at every refresh, with a warning naming each rule: a port opened by hand " +
					"(`ufw allow 7777`) shows here. Import the ones to keep as `gpucluster_firewall_rule`s by these ids.",
				Computed:      true,
				ElementType:   types.StringType,
				PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *firewallResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan refuses, before anything is touched, a firewall that would drop the provider's
// connection given the rules on the node plus the ones ssh_rule and rules name, and warns
// when it would break Slurm (P5, P6).
func (r *firewallResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.cluster == nil {
		return
	}
	if req.Plan.Raw.IsNull() {
		r.recordDestroy(ctx, req, resp)
		return
	}
	// Every firewall in state is due to hold the marker; Update writes one that Read found missing.
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("recorded"), true)...)
	plan, ok := modelFrom[firewallModel](ctx, req.Plan, &resp.Diagnostics)
	if !ok || plan.Node.IsUnknown() || plan.Enabled.IsUnknown() || plan.DefaultIncoming.IsUnknown() {
		return
	}
	resp.Diagnostics.Append(r.switchPlanned(ctx, plan.Node.ValueString(), req.State,
		firewallSwitch{enabled: plan.Enabled.ValueBool(), incoming: plan.DefaultIncoming.ValueString()})...)
	if resp.Diagnostics.HasError() || !r.cluster.settingsKnown() || plan.SSHRule.IsUnknown() || plan.Rules.IsUnknown() {
		return
	}
	if plan.Exclusive.ValueBool() {
		resp.Diagnostics.Append(r.planExclusive(ctx, resp, plan)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if !plan.Enabled.ValueBool() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state firewallModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if plan.Enabled.Equal(state.Enabled) && plan.DefaultIncoming.Equal(state.DefaultIncoming) && plan.SSHRule.Equal(state.SSHRule) &&
			plan.Rules.Equal(state.Rules) && plan.SlurmController.Equal(state.SlurmController) {
			// Nothing that filters incoming traffic changes: a no-op plan spends no round trips.
			return
		}
	}
	node := plan.Node.ValueString()
	listed, diags := r.listedRules(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	h, st, diags := r.cluster.firewallState(ctx, node)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	rules := slices.Concat(withoutKeys(st.Rules, r.cluster.firewallPlans.removedFrom(r.cluster.canonicalNode(node))), listed)
	resp.Diagnostics.Append(refuseLockout(ctx, h, node, rules, true, plan.DefaultIncoming.ValueString(),
		"enabling UFW with incoming "+plan.DefaultIncoming.ValueString(), path.Root("enabled"), declareRuleAdvice)...)
	if resp.Diagnostics.HasError() || plan.SlurmController.IsUnknown() {
		return
	}
	resp.Diagnostics.Append(r.slurmWarnings(ctx, h, node, plan.SlurmController, rules)...)
}

// recordDestroy tells the rules' checks what UFW does on the node after destroy: it restores
// the state found on create (or leaves UFW disabled, where that would lock the provider out).
func (r *firewallResource) recordDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	state, ok := modelFrom[firewallModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(r.switchPlanned(ctx, state.Node.ValueString(), req.State,
		firewallSwitch{enabled: state.PreviousEnabled.ValueBool(), incoming: state.PreviousIncoming.ValueString()})...)
}

// listedRules parses the rules that ssh_rule and rules name; each must be on the firewall's node.
func (r *firewallResource) listedRules(ctx context.Context, m firewallModel) ([]firewall.Rule, diag.Diagnostics) {
	var diags diag.Diagnostics
	type listed struct {
		id   string
		attr path.Path
	}
	var ids []listed
	if !m.SSHRule.IsNull() {
		ids = append(ids, listed{m.SSHRule.ValueString(), path.Root("ssh_rule")})
	}
	var ruleIDs []string
	diags.Append(m.Rules.ElementsAs(ctx, &ruleIDs, false)...)
	for _, id := range ruleIDs {
		ids = append(ids, listed{id, path.Root("rules")})
	}
	node := m.Node.ValueString()
	var rules []firewall.Rule
	for _, l := range ids {
		ruleNode, rule, err := firewall.ParseID(l.id)
		if err != nil {
			diags.AddAttributeError(l.attr, "Invalid Rule ID", "Expected the id of a gpucluster_firewall_rule, "+firewall.IDFormat+".\n\nOriginal Error: "+err.Error())
			continue
		}
		if !r.cluster.sameNode(ruleNode, node) {
			diags.AddAttributeError(l.attr, "Rule On Another Node",
				fmt.Sprintf("%s is a rule on %s, but this firewall is on %s. List only rules of this node.", l.id, ruleNode, node))
			continue
		}
		rules = append(rules, rule)
	}
	return rules, diags
}

// slurmWarnings warns at plan when the firewall would break Slurm on the node. They are
// warnings: a node may run slurmd for another cluster, or the rules may follow later.
func (r *firewallResource) slurmWarnings(ctx context.Context, h *transport.Host, node string, controller types.String, rules []firewall.Rule) diag.Diagnostics {
	var diags diag.Diagnostics
	sn, err := firewall.ReadSlurmNode(ctx, h)
	if err != nil {
		diags.AddAttributeWarning(path.Root("rules"), "Cannot Check Slurm Traffic", fmt.Sprintf("On %s: %s", node, err))
		return diags
	}
	if !controller.IsNull() {
		conf, err := r.controllerSlurmConf(ctx, controller.ValueString())
		if err != nil {
			diags.AddAttributeWarning(path.Root("slurm_controller"), "Cannot Check Slurm Traffic", fmt.Sprintf("On %s: %s", controller.ValueString(), err))
			return diags
		}
		sn.Controller = conf
	}
	for _, w := range firewall.SlurmWarnings(node, rules, sn) {
		diags.AddAttributeWarning(path.Root("rules"), w.Summary, w.Detail)
	}
	return diags
}

// controllerSlurmConf reads the controller's slurm.conf; nil while it does not exist yet.
func (r *firewallResource) controllerSlurmConf(ctx context.Context, controller string) (*firewall.SlurmConf, error) {
	h, err := r.cluster.host(ctx, controller)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return firewall.ReadControllerSlurmConf(ctx, h)
}

func (r *firewallResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *firewallModel) diag.Diagnostics {
		node := m.Node.ValueString()
		diags := r.converge(ctx, m, func(st firewall.State) {
			m.PreviousEnabled = types.BoolValue(st.Enabled)
			m.PreviousIncoming = types.StringValue(st.Incoming)
			m.PreviousOutgoing = types.StringValue(st.Outgoing)
			m.UndeclaredRules = stringSet(r.cluster.undeclaredRules(node, st))
		})
		if m.Exclusive.ValueBool() {
			m.UndeclaredRules = stringSet(nil)
		}
		return diags
	})
}

func (r *firewallResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	prior := priorModel[firewallModel](ctx, req.State, &resp.Diagnostics)
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *firewallModel) diag.Diagnostics {
		m.PreviousEnabled, m.PreviousIncoming, m.PreviousOutgoing = prior.PreviousEnabled, prior.PreviousIncoming, prior.PreviousOutgoing
		// undeclared_rules keeps the value of the refresh the plan showed; the next refresh reads it anew.
		return r.converge(ctx, m, func(firewall.State) {})
	})
}

// converge applies the rules, policies and switch the model declares; before sees the node's
// state as found, before any change.
func (r *firewallResource) converge(ctx context.Context, m *firewallModel, before func(firewall.State)) diag.Diagnostics {
	listed, diags := r.listedRules(ctx, *m)
	if diags.HasError() {
		return diags
	}
	m.ID, m.Recorded = m.Node, types.BoolValue(true)
	return append(diags, r.apply(ctx, m.Node.ValueString(), listed, before,
		m.Exclusive.ValueBool(), m.Enabled.ValueBool(), m.DefaultIncoming.ValueString(), m.DefaultOutgoing.ValueString())...)
}

// apply checks the rules on the node against the provider's connection and the listed rules,
// then sets the policies and the switch in the order that never filters before the policies
// are right. It holds the node's lock throughout: two ufw commands at once on one node fail
// ("problem running"), and a rule added in between would not have been checked.
func (r *firewallResource) apply(ctx context.Context, node string, listed []firewall.Rule, before func(firewall.State), exclusive, enabled bool, incoming, outgoing string) diag.Diagnostics {
	h, st, unlock, diags := r.cluster.lockedFirewallState(ctx, node)
	if diags.HasError() {
		return diags
	}
	defer unlock()
	before(st)
	if exclusive {
		if d := r.deleteUndeclared(ctx, h, node, &st, enabled, incoming); d.HasError() {
			return d
		}
	}
	if d := refuseLockout(ctx, h, node, st.Rules, enabled, incoming, "enabling UFW with incoming "+incoming, path.Root("enabled"), declareRuleAdvice); d.HasError() {
		return d
	}
	if missing := missingRules(st.Rules, listed); enabled && incoming != firewall.PolicyAllow && len(missing) > 0 {
		return diag.Diagnostics{diag.NewAttributeErrorDiagnostic(path.Root("rules"), "Rule Not In Place",
			fmt.Sprintf("UFW on %s was left as it was: the listed rules %s are not on the node, and enabling UFW without them would drop their traffic. "+
				"List gpucluster_firewall_rule ids (gpucluster_firewall_rule.NAME.id), so the rules are created first.", node, strings.Join(missing, ", ")))}
	}
	// Where only rules or slurm_controller changed, ufw would rewrite its files and reload for nothing.
	if st.Enabled != enabled || st.Incoming != incoming || st.Outgoing != outgoing {
		if d := setFirewall(ctx, h, node, enabled, incoming, outgoing); d.HasError() {
			return d
		}
	}
	return markManaged(ctx, h, node, st)
}

// missingRules returns the keys of the listed rules the node does not hold.
func missingRules(onNode, listed []firewall.Rule) []string {
	var missing []string
	for _, want := range listed {
		if !slices.ContainsFunc(onNode, func(r firewall.Rule) bool { return r.Key() == want.Key() }) {
			missing = append(missing, want.Key())
		}
	}
	return missing
}

func setFirewall(ctx context.Context, h *transport.Host, node string, enabled bool, incoming, outgoing string) diag.Diagnostics {
	steps := []func() error{
		func() error { return firewall.SetPolicies(ctx, h, incoming, outgoing) },
		func() error { return firewall.SetEnabled(ctx, h, enabled) },
	}
	if !enabled {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return diag.Diagnostics{nodeError("Cannot Configure Firewall", node, "Setting UFW's policies or switch failed", "", err)}
		}
	}
	return nil
}

// lockedState reads UFW's state under the node's lock, so it is not read halfway through a
// rule change on the same node.
func (r *firewallResource) lockedState(ctx context.Context, node string) (*transport.Host, firewall.State, diag.Diagnostics) {
	h, st, unlock, diags := r.cluster.lockedFirewallState(ctx, node)
	if diags.HasError() {
		return nil, firewall.State{}, diags
	}
	unlock()
	return h, st, nil
}

func (r *firewallResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[firewallModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	_, st, diags := r.lockedState(ctx, state.Node.ValueString())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	state.ID = state.Node
	state.Enabled = types.BoolValue(st.Enabled)
	state.DefaultIncoming = types.StringValue(st.Incoming)
	state.DefaultOutgoing = types.StringValue(st.Outgoing)
	undeclared := r.cluster.undeclaredRules(state.Node.ValueString(), st)
	state.UndeclaredRules = stringSet(undeclared)
	state.Recorded = types.BoolValue(st.Managed)
	warnUndeclared(&resp.Diagnostics, state.Node.ValueString(), undeclared, st)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete restores what create found. Should the rules no longer admit the provider's
// connection, re-enabling would lock it out: UFW is then left disabled, with a warning.
func (r *firewallResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[firewallModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	h, st, unlock, diags := r.cluster.lockedFirewallState(ctx, node)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	defer unlock()
	enabled, incoming, outgoing := state.PreviousEnabled.ValueBool(), state.PreviousIncoming.ValueString(), state.PreviousOutgoing.ValueString()
	if d := refuseLockout(ctx, h, node, st.Rules, enabled, incoming, "restoring the earlier firewall", path.Empty(), declareRuleAdvice); d.HasError() {
		enabled = false
		resp.Diagnostics.AddWarning("Firewall Left Disabled",
			fmt.Sprintf("UFW on %s was enabled before this resource, but re-enabling it with the current rules would drop the provider's own SSH connection, so it was left disabled. Add a rule for SSH and enable it again.\n\n%s", node, d[0].Detail()))
	}
	resp.Diagnostics.Append(setFirewall(ctx, h, node, enabled, incoming, outgoing)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := firewall.Unmark(ctx, h); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Remove Firewall", node, "UFW was restored, but removing "+firewall.ManagedPath+" failed", "Remove the file by hand.", err))
	}
}

// ImportState takes the node. Destroy after an import restores the state found at import. rules
// and slurm_controller are read from the node (firewall_import.go).
func (r *firewallResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node := req.ID
	if !nodeRefPattern.MatchString(node) {
		resp.Diagnostics.Append(invalidImportID(node, "NODE, the node's name or address", "gpu01", ""))
		return
	}
	h, st, diags := r.lockedState(ctx, node)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	controller, diags := importedSlurmController(ctx, h, node)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m := firewallModel{
		ID:               types.StringValue(node),
		Node:             types.StringValue(node),
		Enabled:          types.BoolValue(st.Enabled),
		DefaultIncoming:  types.StringValue(st.Incoming),
		DefaultOutgoing:  types.StringValue(st.Outgoing),
		SSHRule:          types.StringNull(),
		Rules:            importedRuleIDs(node, st.Rules),
		SlurmController:  controller,
		PreviousEnabled:  types.BoolValue(st.Enabled),
		PreviousIncoming: types.StringValue(st.Incoming),
		PreviousOutgoing: types.StringValue(st.Outgoing),
		UndeclaredRules:  stringSet(r.cluster.undeclaredRules(node, st)),
		Exclusive:        types.BoolValue(false),
		Recorded:         types.BoolValue(st.Managed),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
