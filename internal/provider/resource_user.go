package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

var (
	_ resource.ResourceWithConfigure      = (*userResource)(nil)
	_ resource.ResourceWithImportState    = (*userResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*userResource)(nil)
	_ resource.ResourceWithValidateConfig = (*userResource)(nil)
)

const userBusyAdvice = "Processes of the user still running on that node block userdel: end them and apply again. The home directory is always kept."

// NewUserResource returns the gpucluster_user resource.
func NewUserResource() guardedResource { return &userResource{} }

type userResource struct{ cluster *cluster }

type userModel struct {
	ID             types.String `tfsdk:"id"`
	Name           types.String `tfsdk:"name"`
	UID            types.Int64  `tfsdk:"uid"`
	Group          types.String `tfsdk:"group"`
	Groups         types.Set    `tfsdk:"groups"`
	Shell          types.String `tfsdk:"shell"`
	Home           types.String `tfsdk:"home"`
	Nodes          types.Set    `tfsdk:"nodes"`
	HomeOn         types.String `tfsdk:"home_on"`
	AllowSystemUID types.Bool   `tfsdk:"allow_system_uid"`
	AllowAdmin     types.Bool   `tfsdk:"allow_admin_groups"`
	AllowNewUID    types.Bool   `tfsdk:"allow_new_uid_for_retired_name"`
	NodeStatus     types.Map    `tfsdk:"node_status"`
	AdoptedOn      types.Set    `tfsdk:"adopted_on"`
	Recorded       types.Bool   `tfsdk:"recorded"`
}

func (r *userResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_user"
}

func (r *userResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	groupName := stringvalidator.RegexMatches(userNamePattern, "must be a POSIX group name")
	resp.Schema = schema.Schema{
		MarkdownDescription: "A local POSIX user, identical on every listed node, created without a home directory " +
			"there (homes live on the shared /home). The UID is recorded in the ledger on the login node and is never " +
			"given to another name, even after this user is gone. Destroy removes the account record on each node " +
			"and never deletes the home directory.\n\n" +
			"The account the provider itself logs in as (the provider's `user`, `admin` in the guide) is never managed: a plan " +
			"that names it fails, since one apply could take it out of sudo on every node and lock the provider out; so does a destroy that would delete it " +
			"(remove such a resource from the state with `terraform state rm`).\n\n" +
			"A node that already has an account of this name with this UID is taken over (see `adopted_on`); from then on its " +
			"groups, primary group, shell and home follow this resource. The plan shows, per node, what that changes in a warning " +
			"(\"gpu01: leaves groups video; primary group staff becomes users\"), and refuses to take over an account in an " +
			"administrator group (" + markdownList(users.AdminGroups) + ") unless `allow_admin_groups` is set.\n\n" +
			"Import only reads: it refuses nodes that disagree on the UID and a UID the ledger gave to another name, and the apply that follows " +
			"records the UID in the ledger (`recorded`), so a plan of an `import` block that is never applied changes nothing on any host.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("The user name."),
			"name": schema.StringAttribute{
				MarkdownDescription: "User name: lower case letters, digits, `_` and `-`, starting with a letter or `_`, at most 32 characters.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.RegexMatches(userNamePattern, "must be a POSIX user name (lower case, no leading '-', no shell characters)")},
			},
			"uid": schema.Int64Attribute{
				MarkdownDescription: "Numeric user ID, identical on every node because the shared filesystem stores ownership by number. 0 is refused; IDs below 1000 need `allow_system_uid`; an ID the ledger gave to another name is refused, and so is a new UID for a name the ledger records as retired, unless `allow_new_uid_for_retired_name` is set.\n\n" +
					"Changing it renumbers the account in place: the ledger records the new UID and keeps the old one retired, never given to another name, and every node in `nodes` runs `usermod -u`. " +
					"`usermod` re-owns the files under the user's home directory that carry the old UID, so on the shared /home the first node to run it re-owns the home and the others find nothing left to change. " +
					"Files anywhere else (a scratch directory, job output outside the home, another BeeGFS directory) keep the old number, which no name then owns: re-own them by hand (`find DIR -uid OLD -exec chown NEW {} +`). " +
					"`usermod` refuses while the user has processes on a node, such as a running job: that node's apply fails and the others are renumbered, so wait for the jobs to end or drain the node, then apply again.",
				Required: true,
			},
			"group": schema.StringAttribute{
				MarkdownDescription: "Primary group. It must exist on every node; refer to a `gpucluster_group` by its `id` so it is created first. An administrator group needs `allow_admin_groups`.",
				Required:            true,
				Validators:          []validator.String{groupName},
			},
			"groups": schema.SetAttribute{
				MarkdownDescription: "Supplementary groups. Each must exist on every node. Administrator groups (" + markdownList(users.AdminGroups) + ") are refused at plan unless `allow_admin_groups` is set: cluster users are not administrators.",
				Optional:            true,
				ElementType:         types.StringType,
				Validators:          []validator.Set{setvalidator.ValueStringsAre(groupName)},
			},
			"shell": schema.StringAttribute{
				MarkdownDescription: "Login shell. Defaults to `/bin/bash`. It must be an executable file on every node in `nodes`: a plan that can reach the nodes refuses a shell that is missing, naming each node that lacks it.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("/bin/bash"),
			},
			"home": schema.StringAttribute{
				MarkdownDescription: "Home directory. Defaults to `/home/NAME`. It must be at least two levels deep and outside the operating system's directories: " +
					markdownList(users.SystemDirs) + " and everything below them are refused at plan, except below `/var/lib`, where Debian puts service accounts' homes. " +
					"The shared `/home` is where cluster users' homes belong.",
				Optional: true,
				Computed: true,
			},
			"nodes": nodesAttribute("account"),
			"home_on": schema.StringAttribute{
				MarkdownDescription: "One node, from `nodes`, where the home directory is created once, owned by the user, if it does not exist yet. With the shared /home this makes it exist everywhere. It is never deleted.",
				Optional:            true,
				Validators:          []validator.String{nodeRefValidator},
			},
			"allow_system_uid": schema.BoolAttribute{
				MarkdownDescription: "Allow a UID below 1000. Defaults to `false`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"allow_admin_groups": schema.BoolAttribute{
				MarkdownDescription: "Allow an administrator account: `group` or `groups` naming " + markdownList(users.AdminGroups) +
					", or taking over an existing account that is in one of them. These groups grant root (sudo, admin, wheel, root) or the system logs (adm); " +
					"cluster users belong in none of them, and an apply that changes an administrator's groups can lock administrators out. Defaults to `false`.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			allowNewUIDAttr: schema.BoolAttribute{
				MarkdownDescription: allowNewUIDDescription,
				Optional:            true,
			},
			"node_status": nodeStatusAttribute("account"),
			"adopted_on":  adoptedOnAttribute("account"),
			"recorded":    recordedAttribute(users.KindUser),
		},
	}
}

func (r *userResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *userResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, ok := modelFrom[userModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	if !m.Shell.IsNull() && !m.Shell.IsUnknown() {
		if err := users.ValidateShell(m.Shell.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("shell"), "Invalid Shell", err.Error())
		}
	}
	if !m.Home.IsNull() && !m.Home.IsUnknown() {
		if err := users.ValidateHome(m.Home.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("home"), "Invalid Home Directory", err.Error())
		}
	}
	if !m.UID.IsNull() && !m.UID.IsUnknown() && !m.AllowSystemUID.IsUnknown() {
		if err := users.ValidateID(users.KindUser, m.UID.ValueInt64(), m.AllowSystemUID.ValueBool()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("uid"), "Invalid UID", idAdvice(err, m.UID.ValueInt64(), "allow_system_uid"))
		}
	}
	if !m.AllowAdmin.IsUnknown() && !m.AllowAdmin.ValueBool() {
		if !m.Group.IsNull() && !m.Group.IsUnknown() {
			resp.Diagnostics.Append(adminGroupsForUser(path.Root("group"), "group is", []string{m.Group.ValueString()})...)
		}
		if fullyKnown(m.Groups) {
			resp.Diagnostics.Append(adminGroupsForUser(path.Root("groups"), "groups lists", setStrings(ctx, m.Groups, &resp.Diagnostics))...)
		}
	}
	if m.HomeOn.IsNull() || m.HomeOn.IsUnknown() || m.Nodes.IsUnknown() {
		return
	}
	if !fullyKnown(m.Nodes) {
		return
	}
	resp.Diagnostics.Append(notAmongNodes(path.Root("home_on"), "Home Node Not In Nodes", "home_on", m.HomeOn.ValueString(),
		setStrings(ctx, m.Nodes, &resp.Diagnostics), "The account must exist where its home is created.")...)
}

func (r *userResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, ok := plannedModel[userModel](ctx, req, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	// Every account in state is due to be in the ledger; Update records one that Read found missing.
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(recordedAttr), true)...)
	if plan.Home.IsUnknown() && !plan.Name.IsUnknown() {
		plan.Home = types.StringValue("/home/" + plan.Name.ValueString())
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("home"), plan.Home)...)
	}
	if !plan.Name.IsUnknown() {
		resp.Diagnostics.Append(r.cluster.refuseOwnAccount(users.KindUser, plan.Name.ValueString())...)
	}
	if resp.Diagnostics.HasError() || !fullyKnown(plan.Nodes) || r.cluster == nil {
		return
	}
	nodeNames := setStrings(ctx, plan.Nodes, &resp.Diagnostics)
	resp.Diagnostics.Append(planNodeStatus(ctx, req, resp, nodeNames)...)
	state := priorModel[userModel](ctx, req.State, &resp.Diagnostics)
	resp.Diagnostics.Append(planAdoptedOn(ctx, resp, plan.Nodes, state.Nodes, state.AdoptedOn)...)
	if !plan.Name.IsUnknown() {
		r.cluster.planUser(plan.Name.ValueString(), nodeNames)
	}
	if !r.cluster.settingsKnown() || plan.UID.IsUnknown() || plan.Name.IsUnknown() || plan.Group.IsUnknown() || !fullyKnown(plan.Groups) {
		return
	}
	if !req.State.Raw.IsNull() && plan.UID.Equal(state.UID) && plan.Group.Equal(state.Group) && plan.Groups.Equal(state.Groups) &&
		plan.Shell.Equal(state.Shell) && plan.Nodes.Equal(state.Nodes) {
		// Nothing that the nodes could refuse has changed: a no-op plan spends no round trips, and
		// recording an imported account asks only the ledger, from the listing its Read shared.
		if unrecorded(state.Recorded) {
			resp.Diagnostics.Append(r.checkLedger(ctx, plan)...)
		}
		return
	}
	resp.Diagnostics.Append(r.checkLedger(ctx, plan)...)
	resp.Diagnostics.Append(r.cluster.checkOnNodes(ctx, nodeNames, r.accountPlan(ctx, plan, state, &resp.Diagnostics))...)
}

// checkLedger is the cluster's checkLedger for a user, which also refuses a retired name given a
// new UID unless the configuration allows it.
func (r *userResource) checkLedger(ctx context.Context, plan userModel) diag.Diagnostics {
	name, uid := plan.Name.ValueString(), plan.UID.ValueInt64()
	return r.cluster.checkLedger(ctx, users.KindUser, name, uid, path.Root("uid"), retiredNameChecks(users.KindUser, name, uid, plan.AllowNewUID)...)
}

func (r *userResource) accountPlan(ctx context.Context, plan, state userModel, diags *diag.Diagnostics) accountPlan {
	return accountPlan{
		kind:     users.KindUser,
		name:     plan.Name.ValueString(),
		id:       plan.UID.ValueInt64(),
		newNodes: missingFrom(setStrings(ctx, plan.Nodes, diags), setStrings(ctx, state.Nodes, diags)),
		primary:  plan.Group.ValueString(),
		groups:   setStrings(ctx, plan.Groups, diags),
		shell:    plan.Shell.ValueString(),
		home:     plan.Home.ValueString(),

		allowSystemID: plan.AllowSystemUID.ValueBool(),
		allowAdmin:    plan.AllowAdmin.ValueBool(),
	}
}

func (r *userResource) spec(ctx context.Context, m userModel, diags *diag.Diagnostics) users.UserSpec {
	return users.UserSpec{
		Name:         m.Name.ValueString(),
		UID:          m.UID.ValueInt64(),
		PrimaryGroup: m.Group.ValueString(),
		Groups:       setStrings(ctx, m.Groups, diags),
		Shell:        m.Shell.ValueString(),
		Home:         m.Home.ValueString(),
	}
}

func (r *userResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createKeepingPartial(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge, func(m userModel) bool { return !m.AdoptedOn.IsUnknown() })
}

func (r *userResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateAccount(ctx, req, resp, func(ctx context.Context, m *userModel) diag.Diagnostics {
		return r.cluster.claim(ctx, users.KindUser, m.Name.ValueString(), m.UID.ValueInt64())
	}, r.converge)
}

// converge refuses the provider's own account and administrators it may not take over, claims
// the UID, takes over nodes that already hold the account under that UID, makes the account
// identical on every node, creates the home once where asked, and removes the account record
// from dropped nodes unless it was there before the resource. The refusals come before any
// write, since a plan whose connection settings were unknown could not make them.
func (r *userResource) converge(ctx context.Context, m *userModel, prior userModel) diag.Diagnostics {
	var diags diag.Diagnostics
	spec := r.spec(ctx, *m, &diags)
	nodeNames, priorNodes, adoptedBefore := coveredNodes(ctx, &diags, m.Nodes, prior.Nodes, prior.AdoptedOn)
	diags.Append(r.cluster.refuseOwnAccount(users.KindUser, spec.Name)...)
	if diags.HasError() {
		return diags
	}
	adopted, adoptDiags := r.cluster.adopt(ctx, r.accountPlan(ctx, *m, prior, &diags))
	diags.Append(adoptDiags...)
	if diags.HasError() {
		return diags
	}
	diags.Append(r.cluster.claim(ctx, users.KindUser, spec.Name, spec.UID)...)
	if diags.HasError() {
		return diags
	}
	m.Recorded = types.BoolValue(true)
	m.AdoptedOn = stringSet(append(intersect(adoptedBefore, nodeNames), adopted...))
	diags.Append(r.cluster.changeOnEachNode(ctx, nodeNames, func(h *transport.Host) (bool, error) { return users.EnsureUser(ctx, h, spec) },
		"Cannot Create User", fmt.Sprintf("Creating or repairing user %s (UID %d) failed", spec.Name, spec.UID),
		"Check the node's /etc/passwd for a conflicting account with that name or UID.")...)
	if diags.HasError() {
		return diags
	}
	// Every node has the account as declared now, which is what the plan left unknown on new nodes.
	m.NodeStatus = allInSync(nodeNames)
	if homeOn := m.HomeOn.ValueString(); homeOn != "" {
		diags.Append(r.cluster.changeOnEachNode(ctx, []string{homeOn}, func(h *transport.Host) (bool, error) { return users.CreateHome(ctx, h, spec) },
			"Cannot Create Home Directory", "Creating "+spec.Home+" failed", "Check that the parent directory exists on that node.")...)
	}
	diags.Append(r.cluster.removeFromDropped(ctx, users.KindUser, spec.Name, priorNodes, nodeNames, adoptedBefore)...)
	m.ID = m.Name
	return diags
}

func (r *userResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[userModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	spec := r.spec(ctx, state, &resp.Diagnostics)
	status, found := r.cluster.accountNodeStatus(ctx, &resp.Diagnostics, users.KindUser, spec.Name, state.Nodes, func(node string, st users.State) (bool, []string) {
		u := st.Users[spec.Name]
		return u.Exists, users.Diff(node, spec, u)
	})
	state.ID, state.NodeStatus = state.Name, status
	if found && !resp.Diagnostics.HasError() {
		state.Recorded = r.cluster.recordedInLedger(ctx, &resp.Diagnostics, users.KindUser, spec.Name, spec.UID, state.Recorded)
	}
	storeRead(ctx, resp, &state, found)
}

func (r *userResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if state, ok := modelFrom[userModel](ctx, req.State, &resp.Diagnostics); ok {
		r.cluster.destroyAccount(ctx, &resp.Diagnostics, users.KindUser, state.Name.ValueString(), state.UID.ValueInt64(), state.Nodes, state.AdoptedOn)
	}
}

// ImportState takes NAME@NODE1,NODE2 (the nodes where destroy deletes the account) and refuses
// when the nodes disagree on the UID or the ledger gave it to another name. It only reads: with
// import blocks it runs during the plan, which must not change a host, so the apply that follows
// claims the UID (recorded).
func (r *userResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, nodeNames, observed, diags := r.cluster.readForImport(ctx, req.ID, users.KindUser)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	byNode := make(map[string]users.UserState, len(observed))
	for node, st := range observed {
		byNode[node] = st.Users[name]
	}
	uid, err := users.AgreedUID(name, byNode)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Import User", err.Error()+".\n\nFiles on the shared /home belong to one number: make the account identical on every node by hand (usermod -u), or leave a node out of the import ID, then import again.")
		return
	}
	resp.Diagnostics.Append(r.cluster.checkLedger(ctx, users.KindUser, name, uid, path.Root("uid"))...)
	if resp.Diagnostics.HasError() {
		return
	}
	first := observed[nodeNames[0]].Users[name]
	m := userModel{
		ID:             types.StringValue(name),
		Name:           types.StringValue(name),
		UID:            types.Int64Value(uid),
		Group:          types.StringValue(first.PrimaryGroupName),
		Groups:         types.SetNull(types.StringType),
		Shell:          types.StringValue(first.Shell),
		Home:           types.StringValue(first.Home),
		Nodes:          stringSet(nodeNames),
		HomeOn:         types.StringNull(),
		AllowSystemUID: types.BoolValue(uid < users.MinRegularID),
		AllowAdmin:     types.BoolValue(len(users.AdminGroupsIn(append([]string{first.PrimaryGroupName}, first.Groups...)...)) > 0),
		AllowNewUID:    types.BoolNull(),
		NodeStatus:     allInSync(nodeNames),
		AdoptedOn:      stringSet(nil),
		Recorded:       types.BoolValue(false),
	}
	if len(first.Groups) > 0 {
		m.Groups = stringSet(first.Groups)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
