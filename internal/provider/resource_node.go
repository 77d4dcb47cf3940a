package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure   = (*nodeResource)(nil)
	_ resource.ResourceWithImportState = (*nodeResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*nodeResource)(nil)
)

// nodeRoles is the single list that both validates roles and documents them.
var nodeRoles = []string{"controller", "compute", "storage"}

// NewNodeResource returns the gpucluster_node resource.
func NewNodeResource() guardedResource { return &nodeResource{} }

type nodeResource struct{ cluster *cluster }

type nodeModel struct {
	ID             types.String `tfsdk:"id"`
	Name           types.String `tfsdk:"name"`
	Address        types.String `tfsdk:"address"`
	Roles          types.Set    `tfsdk:"roles"`
	SSHAllowGroups types.List   `tfsdk:"ssh_allow_groups"`
	BootTimeout    types.String `tfsdk:"boot_timeout"`
	factsModel
}

func (r *nodeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node"
}

func (r *nodeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"id": computedKeptAttribute("The node name."),
		"name": schema.StringAttribute{
			MarkdownDescription: "Node name. It must equal the hostname the node reports; Slurm and /etc/hosts use it.",
			Required:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators:          []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a hostname")},
		},
		"address": schema.StringAttribute{
			MarkdownDescription: "Address this resource dials to read the node's facts and write its sshd setting. Defaults to `name`, resolved by the jump host. It may come from another resource and be unknown until apply. " +
				"It changes how this resource alone reaches the node: every other resource still dials the node by its name, through a provider `node` block when one names it. " +
				"To give the node an address for every resource, set it in a provider `node` block (`name` and `address`) instead.",
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			Validators:    []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a hostname or an IP address")},
		},
		"roles": schema.SetAttribute{
			MarkdownDescription: "What the node does in the cluster, any of " + markdownList(nodeRoles) + ". It changes nothing on the node. " +
				"An import reads it from the units enabled on the node (" + roleUnitsMarkdown() + "), so a node that runs what its roles say imports with an empty plan.",
			Optional:    true,
			ElementType: types.StringType,
			Validators:  []validator.Set{setvalidator.ValueStringsAre(stringvalidator.OneOf(nodeRoles...))},
		},
		"ssh_allow_groups": schema.ListAttribute{
			MarkdownDescription: "Groups allowed to log in over SSH, written as `AllowGroups` to `/etc/ssh/sshd_config.d/90-allow-sudo.conf` (the guide uses `[\"sudo\"]` on GPU servers), then ssh is reloaded. Refused when the provider's own user is in none of them. Without it the file is left alone.",
			Optional:            true,
			ElementType:         types.StringType,
			Validators: []validator.List{
				listvalidator.SizeAtLeast(1),
				listvalidator.UniqueValues(),
				listvalidator.ValueStringsAre(stringvalidator.RegexMatches(userNamePattern, "must be a group name")),
			},
		},
		"boot_timeout": schema.StringAttribute{
			MarkdownDescription: "How long create waits for a machine that is still booting, as a Go duration (`10m` suits a cloud instance's first boot " +
				"with cloud-init). Set it on a node whose machine the same apply creates or powers on. Create then waits for SSH to answer (a refused or " +
				"timed-out connection, one closed during the handshake, or the jump host unable to reach the node is tried again, with each try logged " +
				"at INFO), then for the first boot to finish: `cloud-init status` done where cloud-init is installed, and `systemctl is-system-running` " +
				"running or degraded. A changed host key, a refused login, and a jump host that cannot be reached still fail at once. An update that " +
				"changes `address` waits the same way. The plan's checks of the node, which need it up, run after the wait when the plan finds it " +
				"not answering yet. Unset, the node must answer at once, as an existing node does, and a node that is down fails at plan.",
			Optional:   true,
			Validators: []validator.String{durationValidator{}},
		},
	}
	for name, desc := range factDescriptions {
		attrs[name] = computedFactAttribute(name, desc)
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Declares one host of the cluster. Create checks that the host is reachable over SSH and " +
			"reports the declared hostname, then records its facts (OS, hardware as `slurmd -C` sees it, GPUs, time " +
			"synchronisation); with `boot_timeout` set it first waits for a machine that is still booting. " +
			"Destroy only forgets the node, after lifting an `ssh_allow_groups` restriction: access is never broken.",
		Attributes: attrs,
	}
}

// roleUnitsMarkdown documents the import's reading of roles from the same table it uses.
func roleUnitsMarkdown() string {
	parts := make([]string, len(nodes.RoleUnits))
	for i, ru := range nodes.RoleUnits {
		parts[i] = "`" + ru.Unit + "` enabled: `" + ru.Role + "`"
	}
	return strings.Join(parts, ", ")
}

func computedFactAttribute(name, desc string) schema.Attribute {
	switch factKind(name) {
	case "bool":
		return schema.BoolAttribute{MarkdownDescription: desc, Computed: true,
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}}
	case "int":
		return schema.Int64Attribute{MarkdownDescription: desc, Computed: true,
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}}
	default:
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
}

func (r *nodeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan refuses at plan time what apply would refuse: an unreachable node, a wrong host
// key or sudo password, a hostname that differs from name, and an ssh_allow_groups that would
// lock the provider's own user out. A plan that changes nothing skips the round trips.
func (r *nodeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	config, ok := plannedModel[nodeModel](ctx, req, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	// Without an address the node is dialled by name, also after an address is removed.
	if config.Address.IsNull() && !config.Name.IsUnknown() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("address"), config.Name)...)
	}
	if r.cluster == nil || !r.cluster.settingsKnown() || resp.Plan.Raw.Equal(req.State.Raw) ||
		config.Name.IsUnknown() || config.Address.IsUnknown() || config.SSHAllowGroups.IsUnknown() {
		return
	}
	name, address := config.Name.ValueString(), r.dialAddress(config)
	var prior *nodeModel
	if !req.State.Raw.IsNull() {
		state, ok := modelFrom[nodeModel](ctx, req.State, &resp.Diagnostics)
		if !ok {
			return
		}
		prior = &state
	}
	if r.notUpYet(ctx, config, prior, name, address) {
		return
	}
	host, facts, diags := r.cluster.gatherFacts(ctx, name, address)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := nodes.CheckHostname(name, facts); err != nil {
		resp.Diagnostics.Append(hostnameMismatch(name, address, facts.Hostname, err))
		return
	}
	var groups []string
	resp.Diagnostics.Append(config.SSHAllowGroups.ElementsAs(ctx, &groups, false)...)
	if len(groups) == 0 {
		return
	}
	user := r.cluster.userFor(address)
	if err := nodes.CheckLoginUserKeepsAccess(ctx, host, user, groups); err != nil {
		resp.Diagnostics.Append(nodeAttributeError(path.Root("ssh_allow_groups"), "SSH Access Would Lock Out The Provider", name,
			"The provider's user "+user+" is in none of the groups", "Add the user to one of the groups first, or list one of its groups.", err))
	}
}

// notUpYet tells ModifyPlan to leave the node's checks to apply: the node waits for its boot
// (waitsForBoot) and does not answer yet, the way a booting machine does not. Apply waits for
// it, then checks it. Any other failure is the plan's to report.
func (r *nodeResource) notUpYet(ctx context.Context, config nodeModel, prior *nodeModel, name, address string) bool {
	if !r.waitsForBoot(config, prior) {
		return false
	}
	_, err := r.cluster.host(ctx, address)
	if err == nil || !transport.StillBooting(address)(err) {
		return false
	}
	tflog.Info(ctx, "node not up yet: its checks run at apply, after the boot wait", map[string]any{"node": name, "address": address, "cause": err.Error()})
	return true
}

// waitsForBoot reports whether applying m waits for the node's boot: boot_timeout is set and
// the node is created (no prior) or dialled at a new address.
func (r *nodeResource) waitsForBoot(m nodeModel, prior *nodeModel) bool {
	if m.BootTimeout.IsNull() || m.BootTimeout.IsUnknown() {
		return false
	}
	return prior == nil || r.dialAddress(*prior) != r.dialAddress(m)
}

func hostnameMismatch(name, address, reported string, err error) diag.Diagnostic {
	return nodeAttributeError(path.Root("name"), "Hostname Mismatch", name,
		fmt.Sprintf("The host at %s reports hostname %q", address, reported),
		"Set name to the node's hostname, or fix the hostname on the node (Slurm and the guide rely on it).", err)
}

func (r *nodeResource) dialAddress(m nodeModel) string {
	if m.Address.IsNull() || m.Address.IsUnknown() || m.Address.ValueString() == "" {
		return m.Name.ValueString()
	}
	return m.Address.ValueString()
}

func (r *nodeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *nodeModel) diag.Diagnostics {
		return r.apply(ctx, m, true, r.waitsForBoot(*m, nil))
	})
}

func (r *nodeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	prior := priorModel[nodeModel](ctx, req.State, &resp.Diagnostics)
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *nodeModel) diag.Diagnostics {
		planned := m.factsModel
		diags := r.apply(ctx, m, !prior.SSHAllowGroups.IsNull(), r.waitsForBoot(*m, &prior))
		// The plan promised the facts of the last refresh; a fact that changed since (a reboot into
		// a new kernel) shows at the next refresh instead of failing this apply as inconsistent.
		m.factsModel = planned
		return diags
	})
}

// apply checks the host, converges the sshd drop-in and records fresh facts, and the address
// it dialled. managedBefore tells whether an existing drop-in is ours to remove when
// ssh_allow_groups goes away; waitBoot, whether to wait for the machine's boot first.
func (r *nodeResource) apply(ctx context.Context, m *nodeModel, managedBefore, waitBoot bool) diag.Diagnostics {
	m.Address = types.StringValue(r.dialAddress(*m))
	m.ID = m.Name
	name := m.Name.ValueString()
	if waitBoot {
		if diags := r.waitUntilBooted(ctx, *m); diags.HasError() {
			return diags
		}
	}
	host, facts, diags := r.cluster.gatherFacts(ctx, name, r.dialAddress(*m))
	if diags.HasError() {
		return diags
	}
	if err := nodes.CheckHostname(name, facts); err != nil {
		return diag.Diagnostics{hostnameMismatch(name, r.dialAddress(*m), facts.Hostname, err)}
	}
	var groups []string
	diags = append(diags, m.SSHAllowGroups.ElementsAs(ctx, &groups, false)...)
	if diags.HasError() {
		return diags
	}
	var err error
	switch {
	case len(groups) > 0:
		_, err = nodes.ApplyAllowGroups(ctx, host, r.cluster.userFor(r.dialAddress(*m)), groups)
	case managedBefore:
		_, err = nodes.RemoveAllowGroups(ctx, host)
	}
	if err != nil {
		return append(diags, nodeAttributeError(path.Root("ssh_allow_groups"), "Cannot Configure SSH Access", name,
			"Writing "+nodes.AllowGroupsPath+" or reloading ssh failed; the previous file was kept",
			"Check that the provider's user is in one of the groups and that `sshd -t` passes on the node.", err))
	}
	m.factsModel = factsFrom(facts)
	return diags
}

// waitUntilBooted waits up to boot_timeout for the node's machine to answer SSH and finish its
// first boot.
func (r *nodeResource) waitUntilBooted(ctx context.Context, m nodeModel) diag.Diagnostics {
	name := m.Name.ValueString()
	timeout, err := time.ParseDuration(m.BootTimeout.ValueString())
	if err != nil {
		return diag.Diagnostics{settingError(path.Root("boot_timeout"), "Invalid Boot Timeout", "boot_timeout is not a duration",
			"Use a Go duration such as \"10m\".", err)}
	}
	if err := r.cluster.waitUntilBooted(ctx, name, r.dialAddress(m), timeout); err != nil {
		return diag.Diagnostics{bootWaitError(name, timeout, err)}
	}
	return nil
}

func (r *nodeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[nodeModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	_, facts, diags := r.cluster.gatherFacts(ctx, name, r.dialAddress(state))
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	state.factsModel = factsFrom(facts)
	state.ID = state.Name
	if state.Address.IsNull() {
		state.Address = types.StringValue(r.dialAddress(state))
	}
	if !state.SSHAllowGroups.IsNull() {
		state.SSHAllowGroups = allowGroupsValue(facts.SSHAllowGroups)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *nodeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[nodeModel](ctx, req.State, &resp.Diagnostics)
	if !ok || state.SSHAllowGroups.IsNull() {
		return
	}
	name := state.Name.ValueString()
	host, err := r.cluster.host(ctx, r.dialAddress(state))
	if err != nil {
		resp.Diagnostics.Append(connectError(name, err))
		return
	}
	if _, err := nodes.RemoveAllowGroups(ctx, host); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Remove SSH Access Restriction", name,
			"Removing "+nodes.AllowGroupsPath+" failed; the node keeps its current sshd settings", "", err))
	}
}

// ImportState takes the node name. The node is then dialled by name, which a provider node
// block may map to an address; an existing 90-allow-sudo.conf becomes ssh_allow_groups. Roles
// are only in the configuration, so the import reads them from what the node runs: the guide's
// cluster then imports with an empty plan, and a role that differs shows in the plan.
func (r *nodeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !nodeRefPattern.MatchString(req.ID) {
		resp.Diagnostics.Append(invalidImportID(req.ID, "NODE, the node's name", "gpu01", ""))
		return
	}
	host, facts, diags := r.cluster.gatherFacts(ctx, req.ID, req.ID)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	roles, err := nodes.Roles(ctx, host)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Import Node", req.ID, "Reading which Slurm and BeeGFS units are enabled failed",
			"Check that the node runs systemd (systemctl is-enabled).", err))
		return
	}
	m := nodeModel{
		ID:             types.StringValue(req.ID),
		Name:           types.StringValue(req.ID),
		Address:        types.StringValue(req.ID),
		Roles:          types.SetNull(types.StringType),
		SSHAllowGroups: types.ListNull(types.StringType),
		BootTimeout:    types.StringNull(),
		factsModel:     factsFrom(facts),
	}
	if facts.SSHAllowGroups != nil {
		m.SSHAllowGroups = stringList(facts.SSHAllowGroups)
	}
	if len(roles) > 0 {
		m.Roles = stringSet(roles)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// allowGroupsValue maps a missing drop-in to an empty list, so a file deleted by hand shows as
// a change back to the configured groups.
func allowGroupsValue(groups []string) types.List {
	if groups == nil {
		return types.ListValueMust(types.StringType, nil)
	}
	return stringList(groups)
}
