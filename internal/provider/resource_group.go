package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

var (
	_ resource.ResourceWithConfigure      = (*groupResource)(nil)
	_ resource.ResourceWithImportState    = (*groupResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*groupResource)(nil)
	_ resource.ResourceWithValidateConfig = (*groupResource)(nil)
)

const groupInUseAdvice = "A group that is still some user's primary group cannot be removed: change or remove that user first."

// NewGroupResource returns the gpucluster_group resource.
func NewGroupResource() guardedResource { return &groupResource{} }

type groupResource struct{ cluster *cluster }

type groupModel struct {
	ID             types.String `tfsdk:"id"`
	Name           types.String `tfsdk:"name"`
	GID            types.Int64  `tfsdk:"gid"`
	Nodes          types.Set    `tfsdk:"nodes"`
	AllowSystemGID types.Bool   `tfsdk:"allow_system_gid"`
	AllowAdmin     types.Bool   `tfsdk:"allow_admin_groups"`
	AllowAdminOld  types.Bool   `tfsdk:"allow_admin_group"`
	AllowNewGID    types.Bool   `tfsdk:"allow_new_gid_for_retired_name"`
	NodeStatus     types.Map    `tfsdk:"node_status"`
	AdoptedOn      types.Set    `tfsdk:"adopted_on"`
	Recorded       types.Bool   `tfsdk:"recorded"`
}

func (r *groupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_group"
}

func (r *groupResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A local POSIX group with the same GID on every listed node. The GID is recorded in the " +
			"ledger on the login node and can never be given to another group name.\n\n" +
			"The group of the account the provider logs in as (named like the provider's `user`) is never managed, and an administrator group (" +
			markdownList(users.AdminGroups) + ") only with `allow_admin_groups`: changing or removing either could cut the provider's or the administrators' rights.\n\n" +
			"Import only reads: it refuses nodes that disagree on the GID and a GID the ledger gave to another name, and the apply that follows " +
			"records the GID in the ledger (`recorded`), so a plan of an `import` block that is never applied changes nothing on any host.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("The group name, known once the group exists. Refer to a group as `gpucluster_group.NAME.id` from `gpucluster_user` so that Terraform creates it first."),
			"name": schema.StringAttribute{
				MarkdownDescription: "Group name: lower case letters, digits, `_` and `-`, starting with a letter or `_`, at most 32 characters.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.RegexMatches(userNamePattern, "must be a POSIX group name (lower case, no leading '-')")},
			},
			"gid": schema.Int64Attribute{
				MarkdownDescription: "Numeric group ID, identical on every node. 0 is refused; IDs below 1000 need `allow_system_gid`; an ID the ledger gave to another name, retired or not, is refused, and so is a new GID for a name the ledger records as retired, unless `allow_new_gid_for_retired_name` is set.",
				Required:            true,
			},
			"nodes": nodesAttribute("group"),
			"allow_system_gid": schema.BoolAttribute{
				MarkdownDescription: "Allow a GID below 1000, such as the guide's `users` group (GID 100). Defaults to `false`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			groupAllowAdmin.name: groupAllowAdmin.attribute("Allow managing an administrator group: " + markdownList(users.AdminGroups) +
				". They grant root (sudo, admin, wheel, root) or the system logs (adm), and an apply that renumbers or removes one can lock administrators out."),
			groupAllowAdmin.oldName: groupAllowAdmin.oldAttribute(),
			allowNewGIDAttr: schema.BoolAttribute{
				MarkdownDescription: allowNewGIDDescription,
				Optional:            true,
			},
			"node_status": nodeStatusAttribute("group"),
			"adopted_on":  adoptedOnAttribute("group"),
			"recorded":    recordedAttribute(users.KindGroup),
		},
	}
}

// groupAllowAdmin is allow_admin_groups, the name gpucluster_user has too, and its earlier
// name on this resource.
var groupAllowAdmin = renamedBool{name: "allow_admin_groups", oldName: "allow_admin_group"}

func (r *groupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *groupResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, ok := modelFrom[groupModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(groupAllowAdmin.validate(m.AllowAdmin, m.AllowAdminOld)...)
	allowAdmin := groupAllowAdmin.value(m.AllowAdmin, m.AllowAdminOld)
	if !m.Name.IsUnknown() && !allowAdmin.IsUnknown() && !allowAdmin.ValueBool() {
		resp.Diagnostics.Append(refuseAdminGroups(path.Root("name"), "name is", []string{m.Name.ValueString()},
			"Its members may become root or read the logs, and an apply that renumbers it, or a destroy that deletes it where the resource created it, "+
				"changes who does: administrators can lose their rights",
			"Leave the group to the nodes' own setup, or set allow_admin_groups = true to manage it.")...)
	}
	if m.GID.IsNull() || m.GID.IsUnknown() || m.AllowSystemGID.IsUnknown() {
		return
	}
	if err := users.ValidateID(users.KindGroup, m.GID.ValueInt64(), m.AllowSystemGID.ValueBool()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("gid"), "Invalid GID", idAdvice(err, m.GID.ValueInt64(), "allow_system_gid"))
	}
}

func (r *groupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	plan, _ := modelFrom[groupModel](ctx, req.Plan, &resp.Diagnostics)
	plan.AllowAdmin = groupAllowAdmin.plan(ctx, req, resp)
	if r.cluster == nil {
		return
	}
	state := priorModel[groupModel](ctx, req.State, &resp.Diagnostics)
	// Every group in state is due to be in the ledger; Update records one that Read found missing.
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(recordedAttr), true)...)
	if !plan.Name.IsUnknown() {
		resp.Diagnostics.Append(r.cluster.refuseOwnAccount(users.KindGroup, plan.Name.ValueString())...)
	}
	if resp.Diagnostics.HasError() || !fullyKnown(plan.Nodes) {
		return
	}
	nodeNames := setStrings(ctx, plan.Nodes, &resp.Diagnostics)
	resp.Diagnostics.Append(planNodeStatus(ctx, req, resp, nodeNames)...)
	resp.Diagnostics.Append(planAdoptedOn(ctx, resp, plan.Nodes, state.Nodes, state.AdoptedOn)...)
	if !plan.Name.IsUnknown() {
		r.cluster.planGroup(plan.Name.ValueString(), nodeNames)
	}
	unchanged := !req.State.Raw.IsNull() && plan.GID.Equal(state.GID) && plan.Nodes.Equal(state.Nodes)
	if !r.cluster.settingsKnown() || plan.GID.IsUnknown() || plan.Name.IsUnknown() || (unchanged && !unrecorded(state.Recorded)) {
		return
	}
	name, gid := plan.Name.ValueString(), plan.GID.ValueInt64()
	resp.Diagnostics.Append(r.cluster.checkLedger(ctx, users.KindGroup, name, gid, path.Root("gid"), retiredNameChecks(users.KindGroup, name, gid, plan.AllowNewGID)...)...)
	if unchanged {
		// Recording an imported group asks only the ledger, from the listing its Read shared.
		return
	}
	resp.Diagnostics.Append(r.cluster.checkOnNodes(ctx, nodeNames, r.accountPlan(ctx, plan, state, &resp.Diagnostics))...)
}

func (r *groupResource) accountPlan(ctx context.Context, plan, state groupModel, diags *diag.Diagnostics) accountPlan {
	return accountPlan{
		kind:     users.KindGroup,
		name:     plan.Name.ValueString(),
		id:       plan.GID.ValueInt64(),
		newNodes: missingFrom(setStrings(ctx, plan.Nodes, diags), setStrings(ctx, state.Nodes, diags)),

		allowSystemID: plan.AllowSystemGID.ValueBool(),
		allowAdmin:    plan.AllowAdmin.ValueBool(),
	}
}

func (r *groupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createKeepingPartial(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge, func(m groupModel) bool { return !m.AdoptedOn.IsUnknown() })
}

func (r *groupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateAccount(ctx, req, resp, func(ctx context.Context, m *groupModel) diag.Diagnostics {
		return r.cluster.claim(ctx, users.KindGroup, m.Name.ValueString(), m.GID.ValueInt64())
	}, r.converge)
}

// converge claims the GID in the ledger, takes over nodes that already hold the group under
// that GID, makes the group identical on every node, and removes it from dropped nodes unless
// it was there before the resource.
func (r *groupResource) converge(ctx context.Context, m *groupModel, prior groupModel) diag.Diagnostics {
	var diags diag.Diagnostics
	nodeNames, priorNodes, adoptedBefore := coveredNodes(ctx, &diags, m.Nodes, prior.Nodes, prior.AdoptedOn)
	name, gid := m.Name.ValueString(), m.GID.ValueInt64()
	diags.Append(r.cluster.refuseOwnAccount(users.KindGroup, name)...)
	if diags.HasError() {
		return diags
	}
	diags.Append(r.cluster.claim(ctx, users.KindGroup, name, gid)...)
	if diags.HasError() {
		return diags
	}
	m.Recorded = types.BoolValue(true)
	adopted, adoptDiags := r.cluster.adopt(ctx, r.accountPlan(ctx, *m, prior, &diags))
	diags.Append(adoptDiags...)
	if diags.HasError() {
		return diags
	}
	m.AdoptedOn = stringSet(append(intersect(adoptedBefore, nodeNames), adopted...))
	diags.Append(r.cluster.changeOnEachNode(ctx, nodeNames, func(h *transport.Host) (bool, error) { return users.EnsureGroup(ctx, h, name, gid) },
		"Cannot Create Group", fmt.Sprintf("Creating or repairing group %s (GID %d) failed", name, gid),
		"Check the node's /etc/group for a conflicting group with that name or GID.")...)
	// Every node has the group as declared now, which is what the plan left unknown on new nodes.
	m.NodeStatus = allInSync(nodeNames)
	diags.Append(r.cluster.removeFromDropped(ctx, users.KindGroup, name, priorNodes, nodeNames, adoptedBefore)...)
	m.ID = m.Name
	return diags
}

func (r *groupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[groupModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	status, found := r.cluster.accountNodeStatus(ctx, &resp.Diagnostics, users.KindGroup, name, state.Nodes, func(node string, st users.State) (bool, []string) {
		g := st.Groups[name]
		return g.Exists, users.DiffGroup(node, name, state.GID.ValueInt64(), g)
	})
	state.ID, state.NodeStatus = state.Name, status
	state.AllowAdmin = groupAllowAdmin.readBack(state.AllowAdmin, state.AllowAdminOld)
	if found && !resp.Diagnostics.HasError() {
		state.Recorded = r.cluster.recordedInLedger(ctx, &resp.Diagnostics, users.KindGroup, name, state.GID.ValueInt64(), state.Recorded)
	}
	storeRead(ctx, resp, &state, found)
}

func (r *groupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if state, ok := modelFrom[groupModel](ctx, req.State, &resp.Diagnostics); ok {
		r.cluster.destroyAccount(ctx, &resp.Diagnostics, users.KindGroup, state.Name.ValueString(), state.GID.ValueInt64(), state.Nodes, state.AdoptedOn)
	}
}

// ImportState takes NAME@NODE1,NODE2 (the nodes where destroy deletes the group); the GID is
// read from the nodes, must agree, and must not be one the ledger gave to another name. It only
// reads, as the plan it runs in with import blocks must: the apply that follows claims the GID.
func (r *groupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, nodeNames, observed, diags := r.cluster.readForImport(ctx, req.ID, users.KindGroup)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	gids := map[string]int64{}
	for node, st := range observed {
		g := st.Groups[name]
		if !g.Exists {
			resp.Diagnostics.AddError("Cannot Import Group", fmt.Sprintf("Group %s does not exist on node %s.\n\nCreate it there, or leave that node out of the import ID.", name, node))
			return
		}
		gids[node] = g.GID
	}
	gid, err := agreeingID(gids, "gid")
	if err != nil {
		resp.Diagnostics.AddError("Cannot Import Group", fmt.Sprintf("Group %s has different GIDs across nodes: %s.\n\nRepair the nodes by hand so that one GID holds everywhere, then import again.", name, err))
		return
	}
	resp.Diagnostics.Append(r.cluster.checkLedger(ctx, users.KindGroup, name, gid, path.Root("gid"))...)
	if resp.Diagnostics.HasError() {
		return
	}
	m := groupModel{
		ID:             types.StringValue(name),
		Name:           types.StringValue(name),
		GID:            types.Int64Value(gid),
		Nodes:          stringSet(nodeNames),
		AllowSystemGID: types.BoolValue(gid < users.MinRegularID),
		AllowAdmin:     types.BoolValue(len(users.AdminGroupsIn(name)) > 0),
		AllowAdminOld:  types.BoolValue(len(users.AdminGroupsIn(name)) > 0),
		AllowNewGID:    types.BoolNull(),
		NodeStatus:     allInSync(nodeNames),
		AdoptedOn:      stringSet(nil),
		Recorded:       types.BoolValue(false),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
