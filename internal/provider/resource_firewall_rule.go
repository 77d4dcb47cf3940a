package provider

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure      = (*firewallRuleResource)(nil)
	_ resource.ResourceWithImportState    = (*firewallRuleResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*firewallRuleResource)(nil)
	_ resource.ResourceWithValidateConfig = (*firewallRuleResource)(nil)
)

const ruleOwnedAdvice = "Each rule on a node belongs to one gpucluster_firewall_rule. Remove the duplicate declaration " +
	"(two rows of a for_each that normalize to the same rule count as duplicates). If the owning resource is gone " +
	"from every state, delete the line from " + firewall.LedgerPath + " on the node, or import the rule."

// NewFirewallRuleResource returns the gpucluster_firewall_rule resource.
func NewFirewallRuleResource() guardedResource { return &firewallRuleResource{} }

type firewallRuleResource struct{ cluster *cluster }

type firewallRuleModel struct {
	ID       types.String `tfsdk:"id"`
	Node     types.String `tfsdk:"node"`
	Action   types.String `tfsdk:"action"`
	Port     types.String `tfsdk:"port"`
	Proto    types.String `tfsdk:"proto"`
	From     types.String `tfsdk:"from"`
	Comment  types.String `tfsdk:"comment"`
	Adopted  types.Bool   `tfsdk:"adopted"`
	Recorded types.Bool   `tfsdk:"recorded"`
}

func (r *firewallRuleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_firewall_rule"
}

func (r *firewallRuleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One incoming UFW rule on one node: traffic from `from` to `port` on any local address. " +
			"The rule is identified by what it admits, never by UFW's rule number, and is read from UFW's own rule files " +
			"(`" + firewall.RulesFile + "`, `" + firewall.Rules6File + "`), so it can be managed before UFW is enabled. " +
			"A rule that already exists is adopted, not added twice, and is left in place on destroy. " +
			"Each rule on a node belongs to one resource: the node's ownership ledger `" + firewall.LedgerPath + "` " +
			"lets the plan, or at the latest the apply, refuse a second resource declaring the same rule.\n\n" +
			"While UFW filters incoming traffic, the plan refuses to delete or replace the rule that admits the provider's own SSH " +
			"connection, counting every other rule the same plan removes from the node (a destroy of the node's `gpucluster_firewall` " +
			"that stops the filtering is taken into account). Terraform deletes a replaced rule before it adds the new one, so move the SSH " +
			"rule in two applies: add the new rule, then remove the old one. A new `deny` rule that would match the provider's connection " +
			"before any allow rule does (UFW appends it after the rules on the node) is refused at plan and at apply.\n\n" +
			"Import with `terraform import gpucluster_firewall_rule.NAME " + firewall.IDForm + "`, for example `" + firewall.IDExample + "`. " +
			"SOURCE is `any`, an address or a CIDR, read as `from` is: `10.0.0.7/24` imports the rule from `10.0.0.0/24`. " +
			"Import only reads: it refuses a rule UFW does not have and one the ledger already lists, and the rule is recorded " +
			"in the ledger by the apply that follows (`recorded`), so a plan of an `import` block that is never applied changes nothing on the node.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The rule's identity on its node, `" + firewall.IDForm + "` (`" + firewall.IDExample + "`). Known at plan time, so `gpucluster_firewall.ssh_rule` can refer to it.",
				Computed:            true,
			},
			"node": nodeAttribute("Node, by name or address, whose UFW holds the rule."),
			"action": schema.StringAttribute{
				MarkdownDescription: "One of " + markdownList(firewall.Actions) + ". Defaults to `allow`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(firewall.ActionAllow),
				PlanModifiers:       replace,
				Validators:          []validator.String{stringvalidator.OneOf(firewall.Actions...)},
			},
			"port": schema.StringAttribute{
				MarkdownDescription: "Destination port (`\"22\"`) or range (`\"60001:61000\"`), 1 to 65535, lower port first.",
				Required:            true,
				PlanModifiers:       replace,
			},
			"proto": schema.StringAttribute{
				MarkdownDescription: "One of " + markdownList(firewall.Protos) + ". A range needs `tcp` or `udp`: UFW refuses a range with `any`. Defaults to `tcp`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(firewall.ProtoTCP),
				PlanModifiers:       replace,
				Validators:          []validator.String{stringvalidator.OneOf(firewall.Protos...)},
			},
			"from": schema.StringAttribute{
				MarkdownDescription: "Source: `any`, an IPv4 or IPv6 address, or a CIDR (`10.0.0.0/24`). Defaults to `any`. A CIDR with host bits set is stored as UFW stores it (`10.0.0.7/24` is `10.0.0.0/24`).",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(firewall.FromAny),
				PlanModifiers:       replace,
			},
			"comment": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("Comment stored with the rule, at most %d printable ASCII characters without quotes. Changing it updates the rule in place: UFW rewrites the comment without removing the rule, so even the SSH rule never lapses.", firewall.MaxCommentLen),
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(""),
			},
			"adopted": schema.BoolAttribute{
				MarkdownDescription: "Whether the rule already existed when the resource was created. An adopted rule is left in place on destroy. `false` after import.",
				Computed:            true,
				PlanModifiers:       []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"recorded": schema.BoolAttribute{
				MarkdownDescription: "Whether the node's ownership ledger `" + firewall.LedgerPath + "` lists the rule as this resource's. " +
					"Always planned `true`: an imported rule, or one whose ledger line was deleted by hand, reads `false` and shows " +
					"`recorded = false -> true` in the plan; the apply writes the ledger line and nothing else.",
				Computed: true,
			},
		},
	}
}

func (r *firewallRuleResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ruleFrom normalizes the model's rule. Unknown values become harmless stand-ins, so every
// known value is still checked; known reports whether the rule is complete.
func ruleFrom(m firewallRuleModel) (rule firewall.Rule, known bool, err error) {
	known = true
	value := func(v types.String, standIn string) string {
		if v.IsUnknown() {
			known = false
			return standIn
		}
		return v.ValueString()
	}
	rule = firewall.Rule{
		Action:  value(m.Action, firewall.ActionAllow),
		Port:    value(m.Port, "1"),
		Proto:   value(m.Proto, firewall.ProtoTCP),
		From:    value(m.From, firewall.FromAny),
		Comment: value(m.Comment, ""),
	}
	rule, err = rule.Normalize()
	return rule, known, err
}

// ruleDiags points each invalid value at its attribute.
func ruleDiags(err error) diag.Diagnostics {
	var diags diag.Diagnostics
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var fe *firewall.FieldError
		if errors.As(e, &fe) {
			diags.AddAttributeError(path.Root(fe.Field), "Invalid Firewall Rule", fmt.Sprintf("%s %s.\n\nNothing was changed on any node.", fe.Field, fe.Err))
			continue
		}
		diags.AddError("Invalid Firewall Rule", e.Error())
	}
	return diags
}

func (r *firewallRuleResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, ok := modelFrom[firewallRuleModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	// Unset optional values are null here; their defaults are valid.
	for _, v := range []*types.String{&m.Action, &m.Proto, &m.From, &m.Comment} {
		if v.IsNull() {
			*v = types.StringValue("")
		}
	}
	if _, _, err := ruleFrom(m); err != nil {
		resp.Diagnostics.Append(ruleDiags(err)...)
	}
}

// ModifyPlan makes the ID known at plan time and refuses, before anything is touched, a rule
// that another resource already owns on the node, and a destroy or replacement that would
// remove the rule admitting the provider's own SSH connection.
//
// Terraform plans a replacement twice: with the prior state, then the create half without it.
// The first plan hands a token to the second through the private state, so the create half is
// known as the same resource (not a duplicate, and the owner of its old rule), also for a
// replacement forced with -replace, whose first plan looks like an update.
func (r *firewallRuleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	creating, destroying := req.State.Raw.IsNull(), req.Plan.Raw.IsNull()
	state := priorModel[firewallRuleModel](ctx, req.State, &resp.Diagnostics)
	plan, _ := plannedModel[firewallRuleModel](ctx, req, req.Plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || r.cluster == nil {
		return
	}
	if destroying {
		resp.Diagnostics.Append(r.checkRemoval(ctx, state, "deleting")...)
		return
	}
	// Every rule in state is due to be in the ledger; Update records one that Read found missing.
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("recorded"), true)...)
	token, prior, replacing := r.planToken(ctx, req, resp, plan, state, creating)
	if replacing {
		resp.Diagnostics.Append(r.checkRemoval(ctx, prior, "replacing")...)
	}
	rule, known, err := ruleFrom(plan)
	if err != nil || !known || plan.Node.IsUnknown() {
		return
	}
	node := plan.Node.ValueString()
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), firewall.ID(node, rule))...)
	if r.cluster.firewallPlans.declare(r.cluster.canonicalNode(node), rule, token) {
		resp.Diagnostics.AddAttributeError(path.Root("port"), "Duplicate Firewall Rule",
			fmt.Sprintf("Another gpucluster_firewall_rule in this configuration declares the rule %s on node %s. Two resources would fight over one rule, and destroying one would remove the other's rule.\n\n%s",
				rule.Key(), node, ruleOwnedAdvice))
		return
	}
	// Terraform plans the replacement of a tainted rule (a create cut short) as a create without
	// the prior state: the rule this run's refresh found held in state is removed first.
	if creating && !replacing && r.cluster.firewallPlans.isHeld(r.cluster.canonicalNode(node), rule.Key()) {
		resp.Diagnostics.Append(r.checkRemoval(ctx, plan, "replacing")...)
	}
	// The create half of a replacement is planned again without the prior state and checked then.
	recording := !creating && !replacing && unrecorded(state.Recorded)
	if (!creating && !recording) || !r.cluster.settingsKnown() {
		return
	}
	h, st, diags := r.cluster.firewallState(ctx, node)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	if recording {
		resp.Diagnostics.Append(recordedElsewhere(st, node, rule)...)
		return
	}
	if !r.cluster.firewallPlans.isReleased(r.cluster.canonicalNode(node), rule.Key()) {
		resp.Diagnostics.Append(ownedElsewhere(st, node, rule)...)
	}
	if rule.Action == firewall.ActionDeny && !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(r.cluster.checkDenyRule(ctx, node, rule, h, st)...)
	}
}

const planTokenKey = "plan_token"

// planToken returns the token of the resource being planned, and when this plan replaces the
// rule in prior, the prior state. The first plan of a resource in state issues a new token
// and passes it on in the private state; the create half of a replacement finds it there.
func (r *firewallRuleResource) planToken(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse,
	plan, state firewallRuleModel, creating bool) (token string, prior firewallRuleModel, replacing bool) {
	plans := &r.cluster.firewallPlans
	if !creating {
		token = plans.issue(state)
		raw, _ := json.Marshal(token)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, planTokenKey, raw)...)
		return token, state, rulePlanKind(plan, state, false) == planReplace
	}
	raw, diags := req.Private.GetKey(ctx, planTokenKey)
	resp.Diagnostics.Append(diags...)
	if json.Unmarshal(raw, &token) == nil {
		if prior, ok := plans.priorOf(token); ok {
			// A first plan that saw an update, yet Terraform replaces: -replace.
			return token, prior, rulePlanKind(plan, prior, false) == planUpdate
		}
	}
	return rand.Text(), firewallRuleModel{}, false
}

// checkRemoval checks at plan that removing the rule in state keeps the provider connected, and
// releases its ownership for this run's other checks. An adopted rule stays on the node, so
// removing its resource removes nothing.
func (r *firewallRuleResource) checkRemoval(ctx context.Context, state firewallRuleModel, verb string) diag.Diagnostics {
	rule, known, err := ruleFrom(state)
	if err != nil || !known || state.Node.IsUnknown() {
		return nil
	}
	r.cluster.firewallPlans.release(r.cluster.canonicalNode(state.Node.ValueString()), rule.Key())
	if state.Adopted.ValueBool() || !r.cluster.settingsKnown() {
		return nil
	}
	return r.cluster.checkRuleRemoval(ctx, state.Node.ValueString(), rule, verb+" "+rule.Key())
}

// ruleModelFrom reads the model from a plan or state, with the rule it declares; ok is false
// once diags holds an error.
func ruleModelFrom(ctx context.Context, from modelGetter, diags *diag.Diagnostics) (m firewallRuleModel, rule firewall.Rule, ok bool) {
	m, ok = modelFrom[firewallRuleModel](ctx, from, diags)
	if !ok {
		return m, rule, false
	}
	rule, _, err := ruleFrom(m)
	if err != nil {
		diags.Append(ruleDiags(err)...)
		return m, rule, false
	}
	return m, rule, true
}

// storeRule ends Create and Update: the rule is in place on the node.
func storeRule(ctx context.Context, resp *tfsdk.State, diags *diag.Diagnostics, m firewallRuleModel, rule firewall.Rule, adopted types.Bool) {
	if diags.HasError() {
		return
	}
	m.ID = types.StringValue(firewall.ID(m.Node.ValueString(), rule))
	m.Adopted = adopted
	m.Recorded = types.BoolValue(true)
	diags.Append(resp.Set(ctx, &m)...)
}

// Create writes the rule's ledger line before it adds the rule: the line is the create's record
// on the node, so a rule that an apply cut short had added is never taken for one made by hand
// (adopted) by the next apply. A create cut short keeps its partial state, which Terraform taints:
// the next apply removes the rule and adds it again. Any other failure takes the line back.
func (r *firewallRuleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, rule, ok := ruleModelFrom(ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	node := plan.Node.ValueString()
	var cut bool
	adopted, diags := r.withLockedState(ctx, node, func(h *transport.Host, st firewall.State) (bool, diag.Diagnostics) {
		if d := ownedElsewhere(st, node, rule); d.HasError() {
			return false, d
		}
		existing, present := firewall.Find(st.Rules, rule.Key())
		// An allow rule appended after the others cannot change how the connection is matched.
		if !present && rule.Action == firewall.ActionDeny {
			if d := refuseLockout(ctx, h, node, append(slices.Clone(st.Rules), rule), st.Enabled, st.Incoming, "adding "+rule.Key(), path.Root("action"), denyRuleAdvice); d.HasError() {
				return false, d
			}
		}
		if err := firewall.WriteLedger(ctx, h, append(st.Owned, rule.Key())); err != nil {
			cut = isCutShort(err)
			return present, diag.Diagnostics{nodeError("Cannot Record Firewall Rule", node, "Recording "+rule.Key()+" in the ownership ledger before adding it failed", "Apply again.", err)}
		}
		if !present || existing.Comment != rule.Comment {
			if err := firewall.Add(ctx, h, rule); err != nil {
				diags := diag.Diagnostics{nodeError("Cannot Add Firewall Rule", node, "Adding "+rule.Key()+" with ufw failed", "", err)}
				if cut = isCutShort(err); !cut {
					diags.Append(unrecordFailed(ctx, h, node, st.Owned)...)
				}
				return present, diags
			}
		}
		return present, nil
	})
	resp.Diagnostics.Append(diags...)
	if cut {
		plan.ID = types.StringValue(firewall.ID(node, rule))
		plan.Adopted = types.BoolValue(adopted)
		plan.Recorded = types.BoolValue(true)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	storeRule(ctx, &resp.State, &resp.Diagnostics, plan, rule, types.BoolValue(adopted))
}

// unrecordFailed takes back the ledger line of a rule whose add failed, so the ledger lists no
// rule that no resource holds.
func unrecordFailed(ctx context.Context, h *transport.Host, node string, owned []string) diag.Diagnostics {
	if err := firewall.WriteLedger(ctx, h, owned); err != nil {
		return diag.Diagnostics{nodeError("Cannot Record Firewall Rule", node, "Removing the line of the rule that was not added from the ownership ledger failed",
			"Delete the rule's line from "+firewall.LedgerPath+" on the node by hand.", err)}
	}
	return nil
}

// withLockedState runs fn under the node's lock with UFW's current state, so reading the
// ledger and writing it back are not interleaved with another rule on the same node.
func (r *firewallRuleResource) withLockedState(ctx context.Context, node string, fn func(*transport.Host, firewall.State) (bool, diag.Diagnostics)) (bool, diag.Diagnostics) {
	h, st, unlock, diags := r.cluster.lockedFirewallState(ctx, node)
	if diags.HasError() {
		return false, diags
	}
	defer unlock()
	return fn(h, st)
}

func (r *firewallRuleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, rule, ok := ruleModelFrom(ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	_, st, diags := r.cluster.firewallState(ctx, node)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	found, present := firewall.Find(st.Rules, rule.Key())
	if present {
		r.cluster.firewallPlans.hold(r.cluster.canonicalNode(node), rule.Key())
	}
	state.ID = types.StringValue(firewall.ID(node, rule))
	state.Comment = types.StringValue(found.Comment)
	// Read never records a rule: a listed rule that this state has not recorded is another state's.
	state.Recorded = types.BoolValue(st.Owns(rule.Key()) && !unrecorded(state.Recorded))
	storeRead(ctx, resp, &state, present)
}

// Update changes the comment and records the rule in the ledger: every other attribute is the
// rule's identity. Adding the rule again makes UFW rewrite the comment in place.
func (r *firewallRuleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	state, _ := modelFrom[firewallRuleModel](ctx, req.State, &resp.Diagnostics)
	plan, rule, ok := ruleModelFrom(ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	node := plan.Node.ValueString()
	_, diags := r.withLockedState(ctx, node, func(h *transport.Host, st firewall.State) (bool, diag.Diagnostics) {
		// Checked again under the lock: another state may have recorded the rule since the plan.
		if unrecorded(state.Recorded) {
			if d := recordedElsewhere(st, node, rule); d.HasError() {
				return false, d
			}
		}
		if !plan.Comment.Equal(state.Comment) {
			if err := firewall.Add(ctx, h, rule); err != nil {
				return false, diag.Diagnostics{nodeError("Cannot Update Firewall Rule", node, "Changing the comment of "+rule.Key()+" with ufw failed", "", err)}
			}
		}
		if !st.Owns(rule.Key()) {
			if err := firewall.WriteLedger(ctx, h, append(st.Owned, rule.Key())); err != nil {
				return false, diag.Diagnostics{nodeError("Cannot Record Firewall Rule", node, "Recording the rule in the ownership ledger failed", "Apply again.", err)}
			}
		}
		return false, nil
	})
	resp.Diagnostics.Append(diags...)
	storeRule(ctx, &resp.State, &resp.Diagnostics, plan, rule, state.Adopted)
}

// Delete removes the rule unless it was adopted, and refuses when that would cut the
// provider's own SSH connection through an active firewall. The rule of an imported resource
// that another state has recorded since is that state's: it stays, with its ledger line.
func (r *firewallRuleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, rule, ok := ruleModelFrom(ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	_, diags := r.withLockedState(ctx, node, func(h *transport.Host, st firewall.State) (bool, diag.Diagnostics) {
		if unrecorded(state.Recorded) && st.Owns(rule.Key()) {
			return false, diag.Diagnostics{diag.NewWarningDiagnostic("Firewall Rule Left to Its Owner",
				fmt.Sprintf("The rule %s on node %s is listed in %s by a gpucluster_firewall_rule in another state, which this resource's import never recorded. The rule was left in place and only removed from this state.", rule.Key(), node, firewall.LedgerPath))}
		}
		if !state.Adopted.ValueBool() {
			if d := refuseLockout(ctx, h, node, firewall.Without(st.Rules, rule.Key()), st.Enabled, st.Incoming, "deleting "+rule.Key(), path.Empty(), keepRuleAdvice); d.HasError() {
				return false, d
			}
			if err := firewall.Delete(ctx, h, rule); err != nil {
				return false, diag.Diagnostics{nodeError("Cannot Delete Firewall Rule", node, "Deleting "+rule.Key()+" with ufw failed", "", err)}
			}
		}
		owned := slices.DeleteFunc(slices.Clone(st.Owned), func(k string) bool { return k == rule.Key() })
		if err := firewall.WriteLedger(ctx, h, owned); err != nil {
			return false, diag.Diagnostics{nodeError("Cannot Record Firewall Rule", node, "Removing the rule from the ownership ledger failed", "Apply again.", err)}
		}
		return false, nil
	})
	resp.Diagnostics.Append(diags...)
}

// ImportState takes NODE:ACTION:PORT/PROTO:from=SOURCE and only reads: with import blocks it
// runs during the plan, which must not change a host. The apply that follows records the rule in
// the node's ledger (recorded). A rule already in the ledger belongs to a resource in some state
// (the ledger cannot tell which): importing it too would let either state's destroy remove the
// other's rule, so it is refused until the admin hands it over by deleting its ledger line.
func (r *firewallRuleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, rule, err := firewall.ParseID(req.ID)
	if err != nil {
		resp.Diagnostics.Append(invalidImportID(req.ID, firewall.IDForm, firewall.IDExample, "Original Error: "+err.Error()))
		return
	}
	_, st, diags := r.cluster.firewallState(ctx, node)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	found, present := firewall.Find(st.Rules, rule.Key())
	if !present {
		resp.Diagnostics.Append(nodeError("Cannot Import Firewall Rule", node,
			"UFW has no rule "+rule.Key(), "Check the ID against the tuples in "+firewall.RulesFile+" (sudo ufw show added). The ID's format is "+firewall.IDFormat+".", nil))
		return
	}
	if st.Owns(rule.Key()) {
		resp.Diagnostics.Append(importOwnedRule(node, rule.Key()))
		return
	}
	m := firewallRuleModel{
		ID:       types.StringValue(firewall.ID(node, rule)),
		Node:     types.StringValue(node),
		Action:   types.StringValue(rule.Action),
		Port:     types.StringValue(rule.Port),
		Proto:    types.StringValue(rule.Proto),
		From:     types.StringValue(rule.From),
		Comment:  types.StringValue(found.Comment),
		Adopted:  types.BoolValue(false),
		Recorded: types.BoolValue(false),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
