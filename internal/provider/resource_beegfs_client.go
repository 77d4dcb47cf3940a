package provider

import (
	"context"
	"errors"
	"fmt"
	"net"

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
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure   = (*beegfsClientResource)(nil)
	_ resource.ResourceWithImportState = (*beegfsClientResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*beegfsClientResource)(nil)
)

// NewBeegfsClientResource returns the gpucluster_beegfs_client resource.
func NewBeegfsClientResource() guardedResource { return &beegfsClientResource{} }

type beegfsClientResource struct{ cluster *cluster }

type beegfsClientModel struct {
	ID               types.String `tfsdk:"id"`
	Node             types.String `tfsdk:"node"`
	MgmtdHost        types.String `tfsdk:"mgmtd_host"`
	MountPath        types.String `tfsdk:"mount_path"`
	MigrateLocalHome types.Bool   `tfsdk:"migrate_local_home"`
	ExpectedFSType   types.String `tfsdk:"expected_fstype"`
	Mounted          types.Bool   `tfsdk:"mounted"`
	Version          types.String `tfsdk:"version"`
	Pin              types.String `tfsdk:"beegfs_version"`
	Status           types.String `tfsdk:"status"`
}

// clientPackages is what beegfs_version pins on a client node.
var clientPackages = beegfsPackages(beegfs.ClientPackage, beegfs.ServiceClient).
	noting("The client's restart unmounts and mounts `mount_path` again, with the module rebuilt for the new version: upgrade when no job uses it.")

func (m beegfsClientModel) settings() beegfs.ClientSettings {
	return beegfs.ClientSettings{MountPath: m.MountPath.ValueString(), Mgmtd: m.MgmtdHost.ValueString(), FSType: m.ExpectedFSType.ValueString()}
}

func (r *beegfsClientResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_beegfs_client"
}

func (r *beegfsClientResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The BeeGFS client of one node, mounting BeeGFS over `/home` as the guide does: `" + beegfs.SetupClientTool + " -m MGMTD_HOST` (run only when `sysMgmtdHost` differs), `" +
			beegfs.MountsConfPath + "` with the one line `/home " + beegfs.ClientConfPath + "`, `systemctl enable --now " + beegfs.ServiceClient + "`, then a check that `findmnt /home` shows `expected_fstype`.\n\n" +
			"**Pitfall P9.** Anything in the local `/home` becomes invisible once BeeGFS mounts, including the connecting admin's `~/.ssh/authorized_keys`. Before the first mount the provider " +
			"looks at BeeGFS through a private staging mount and refuses, changing nothing, unless that admin's home with `.ssh/authorized_keys` (owned by the admin, not writable by others) is already there. " +
			"Create it on BeeGFS, or set `migrate_local_home = true` to copy the local `/home` into BeeGFS first (`rsync -aHAX --numeric-ids --ignore-existing` from a bind mount of the local directory: " +
			"files already on BeeGFS are never overwritten).\n\n" +
			"Refresh reports the guide's \"home directories are missing on one node\" (nothing, or another filesystem, mounted at `/home`), a changed `" + beegfs.MountsConfPath + "` or `sysMgmtdHost`, " +
			"and a stopped or disabled service; apply mounts again. The node needs `" + beegfs.ConnAuthPath + "` first: let the resource `depends_on` the `gpucluster_beegfs_management` that distributes it.\n\n" +
			"**Kernel module.** The client's kernel module is built on the node by the service (`" + beegfs.ClientScript + " rebuild`), which needs `linux-headers-$(uname -r)` and `build-essential`. " +
			"Before the first mount the provider builds and loads it, so that the P9 check can mount. A module built only for another kernel (a kernel upgrade) or awaiting the package's rebuild (`" + beegfs.ForceAutoBuildPath + "`) shows in `status`; " +
			"apply rebuilds it and then restarts the client, and a build that fails leaves the running mount alone.\n\n" +
			"Destroy stops and disables the client, which unmounts BeeGFS; the local `/home` is visible again and nothing on BeeGFS is touched. Import with the node's name.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("The node name."),
			"node": schema.StringAttribute{
				MarkdownDescription: "The node, by its name in the provider's node blocks. Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a host name")},
			},
			"mgmtd_host": schema.StringAttribute{
				MarkdownDescription: "The management host, passed as `-m` to `" + beegfs.SetupClientTool + "` (the guide: `10.0.0.10`). Changing it sets `sysMgmtdHost` again and remounts.",
				Required:            true,
				Validators:          []validator.String{stringCheck{"must be an IP address or a host name", beegfs.ValidateMgmtdHost}},
			},
			"mount_path": schema.StringAttribute{
				MarkdownDescription: "Where BeeGFS is mounted. Defaults to `" + beegfs.DefaultClientMountPath + "`. Changing it replaces the resource: the old mount is unmounted, then the new one goes through the P9 check.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(beegfs.DefaultClientMountPath),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringCheck{"must be an absolute directory other than /, without blanks or commas", beegfs.ValidateMountPath}},
			},
			"migrate_local_home": schema.BoolAttribute{
				MarkdownDescription: "Copy the local content of `mount_path` into BeeGFS before the first mount (`rsync -aHAX --numeric-ids --ignore-existing`, from a bind mount of the local directory). " +
					"Defaults to `false`: the first mount is then refused unless the connecting admin's home with `.ssh/authorized_keys` already exists on BeeGFS. Only acts before a mount; the local copy stays where it is.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"expected_fstype": schema.StringAttribute{
				MarkdownDescription: "The filesystem type `findmnt` must show at `mount_path`. Defaults to `" + beegfs.DefaultClientFSType + "`; the test lab's stand-in client mounts `tmpfs`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(beegfs.DefaultClientFSType),
				Validators:          []validator.String{stringCheck{"must be a filesystem type such as beegfs", beegfs.ValidateFSType}},
			},
			"mounted": schema.BoolAttribute{
				MarkdownDescription: "Whether `findmnt` showed `expected_fstype` at `mount_path` at the last refresh. `false` is the guide's \"home directories are missing on one node\"; a plan that changes it back to `true` mounts again.",
				Computed:            true,
			},
			"version":        computedKeptAttribute("Installed version of `" + beegfs.ClientPackage + "` (`dpkg-query`). A plan that changes `beegfs_version` shows it going to the wanted version."),
			"beegfs_version": clientPackages.schemaAttribute(),
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or what the last refresh found different on the node: `" + beegfs.MountsConfPath + "`, the service not enabled or not active, nothing or another filesystem mounted, " +
					"the kernel module not built for the running kernel. " +
					"A plan that changes it back to `" + inSync + "` repairs the node.",
				Computed: true,
			},
		},
	}
}

func (r *beegfsClientResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan plans the node mounted and in sync, so drift shows as a change back to it.
func (r *beegfsClientResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("mounted"), types.BoolValue(true))...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(inSync))...)
	plan, state, creating, ok := planAndState[beegfsClientModel](ctx, req, &resp.Diagnostics)
	if !ok || (!creating && !plan.Node.Equal(state.Node)) {
		return
	}
	// A new client's installed version is read at apply, which refuses a downgrade there.
	clientPackages.planVersion(ctx, resp, plan.Node.ValueString(), plan.Pin, knownString(state.Version))
}

func (r *beegfsClientResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

func (r *beegfsClientResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

// converge sets the management host and the mounts file where they differ, guards the first
// mount (P9), starts the client and checks what findmnt shows.
func (r *beegfsClientResource) converge(ctx context.Context, m *beegfsClientModel) diag.Diagnostics {
	node, set := m.Node.ValueString(), m.settings()
	// An upgraded package asks for its module's rebuild (force-auto-build), which restarts a
	// running client below, so the pin's own restart request is not needed here.
	_, diags := clientPackages.pinBeegfs(ctx, r.cluster, node, beegfs.ServiceClient, m.Pin)
	if diags.HasError() {
		return diags
	}
	h, st, diags := r.readClient(ctx, node, set.MountPath)
	if diags.HasError() {
		return diags
	}
	if d := checkClientInstalled(node, st); d != nil {
		diags.Append(d)
		return diags
	}
	if err := st.CheckConnAuth(); err != nil {
		diags.Append(nodeError("BeeGFS Shared Secret Missing", node, "The client cannot mount without the shared secret",
			"Add the node to auth_nodes of gpucluster_beegfs_management and let this resource depend on it, then apply again.", err))
		return diags
	}
	mounted := st.MountedAt(set.MountPath, set.FSType)
	if st.Module.NeedsBuild() || !mounted {
		// The staging mount of the P9 check needs the module the service's first start would build.
		if err := beegfs.PrepareClientModule(ctx, h, st.Module, !mounted); err != nil {
			diags.Append(moduleError(node, st.Module.Kernel, err))
			return diags
		}
	}
	if !mounted {
		diags.Append(r.guardFirstMount(ctx, h, st, m)...)
		if diags.HasError() {
			return diags
		}
	}
	configChanged := false
	if st.MgmtdHost() != set.Mgmtd {
		if err := beegfs.SetupClient(ctx, h, set.Mgmtd); err != nil {
			diags.Append(nodeError("Cannot Set Up BeeGFS Client", node, "Setting the management host with "+beegfs.SetupClientTool+" failed", adviceWrite, err))
			return diags
		}
		configChanged = true
	}
	changed, err := beegfs.WriteMountsConf(ctx, h, set.MountPath, st.MountsConf)
	if err != nil {
		diags.Append(nodeError("Cannot Write BeeGFS Mounts", node, "Writing "+beegfs.MountsConfPath+" failed", adviceWrite, err))
		return diags
	}
	if err := beegfs.StartClient(ctx, h, st, configChanged || changed, mounted); err != nil {
		diags.Append(r.startError(node, st.Module.Kernel, err))
		return diags
	}
	after, err := beegfs.ReadClient(ctx, h, set.MountPath)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Client", node, "Reading the client's state after starting it failed", adviceRead, err))
		return diags
	}
	if !after.MountedAt(set.MountPath, set.FSType) {
		diags.Append(nodeAttributeError(path.Root("expected_fstype"), "BeeGFS Not Mounted", node,
			fmt.Sprintf("%s runs, but findmnt shows %s at %s, not %s", beegfs.ServiceClient, describeMount(after.Mount), set.MountPath, set.FSType),
			"Check systemctl status "+beegfs.ServiceClient+" and lsmod | grep beegfs there (the guide's Troubleshooting); a kernel upgrade without matching headers is the usual cause. "+
				"A lab stand-in mounts tmpfs: set expected_fstype accordingly.", nil))
		return diags
	}
	m.ID = m.Node
	m.Mounted = types.BoolValue(true)
	m.Version = types.StringValue(after.Version)
	m.Status = types.StringValue(describeDrift(after.Problems(set)))
	return diags
}

// startError says why the service did not start: the module's build, the mount sanity
// check naming the service the node could not reach, or else the journal as it is.
func (r *beegfsClientResource) startError(node, kernel string, err error) diag.Diagnostic {
	if beegfs.ModuleBuildFailure(err.Error()) {
		return moduleError(node, kernel, err)
	}
	if f := beegfs.FindMountCheckFailure(err.Error()); f != nil {
		return mountCheckError(node, f, r.cluster.canonicalNode, err)
	}
	return nodeError("BeeGFS Client Does Not Start", node, "Starting "+beegfs.ServiceClient+" failed",
		"Check that the management host answers and that the node has the cluster's "+beegfs.ConnAuthPath+"; the service's journal is below.", err)
}

// moduleError is the client's kernel module failing to build or load, before anything was
// mounted or restarted.
func moduleError(node, kernel string, err error) diag.Diagnostic {
	return nodeError("BeeGFS Client Module Not Built", node,
		"The BeeGFS client's kernel module for the running kernel "+kernel+" could not be built or loaded, so BeeGFS cannot mount; the mount the node has, if any, is untouched",
		"Install linux-headers-"+kernel+" and build-essential on the node, as the guide says, and check buildEnabled=true in "+beegfs.AutobuildConfPath+
			"; the build's own output is below. Then apply again: the service builds the module on its next start.", err)
}

// mountCheckError is the client module's mount sanity check refusing the mount: the
// service it names did not answer, usually a firewall or a service not started yet.
func mountCheckError(node string, f *beegfs.MountCheckFailure, nodeOf func(string) string, err error) diag.Diagnostic {
	ports := map[string]string{"beegfs-mgmtd": "8008", "beegfs-meta": "8005", "beegfs-storage": "8003"}
	where := "its host"
	port := ports[f.Service]
	if host, p, splitErr := net.SplitHostPort(f.Endpoint); splitErr == nil {
		where, port = nodeOf(host), p
		if where != host {
			where += " (" + host + ")"
		}
	}
	return nodeError("BeeGFS Mount Sanity Check Failed", node,
		fmt.Sprintf("The client's mount sanity check could not reach %s on %s, port %s, so the mount was canceled: %s", f.Service, where, port, f.Line),
		fmt.Sprintf("Start %s on %s and open TCP and UDP port %s there to %s (the guide's firewall rules for BeeGFS), then apply again.", f.Service, where, port, node), err)
}

// guardFirstMount is pitfall P9: the first mount over a local directory must not hide the
// connecting admin's home with the keys the provider logs in with.
func (r *beegfsClientResource) guardFirstMount(ctx context.Context, h *transport.Host, st beegfs.ClientState, m *beegfsClientModel) diag.Diagnostics {
	var diags diag.Diagnostics
	node, set := m.Node.ValueString(), m.settings()
	admin := r.cluster.userFor(node)
	err := beegfs.GuardFirstMount(ctx, h, st, set, admin, m.MigrateLocalHome.ValueBool())
	var refusal *beegfs.HomeRefusal
	switch {
	case errors.As(err, &refusal):
		diags.Append(homeRefusalError(node, admin, set.MountPath, refusal))
	case err != nil && beegfs.FindMountCheckFailure(err.Error()) != nil:
		diags.Append(mountCheckError(node, beegfs.FindMountCheckFailure(err.Error()), r.cluster.canonicalNode, err))
	case err != nil && m.MigrateLocalHome.ValueBool():
		diags.Append(nodeError("Cannot Migrate Local Home", node,
			"Looking at BeeGFS through a staging mount, or copying the local "+set.MountPath+" into it, failed; nothing is mounted over "+set.MountPath,
			"Check that the management host answers, that the node has "+beegfs.ConnAuthPath+" and rsync, and apply again. "+
				"A copy that stopped midway keeps what it copied on BeeGFS; the next one adds only what is missing and overwrites nothing.", err))
	case err != nil:
		diags.Append(nodeError("Cannot Check BeeGFS Before Mounting", node,
			"Looking at BeeGFS through a staging mount failed; nothing was mounted and nothing changed",
			"Check that the management host answers and that the node has "+beegfs.ConnAuthPath+".", err))
	}
	return diags
}

// homeRefusalError is pitfall P9 refused. A refusal after the migration has copied the local
// content says so: the node is unchanged, but BeeGFS is not.
func homeRefusalError(node, admin, mountPath string, refusal *beegfs.HomeRefusal) diag.Diagnostic {
	home := refusal.Account.Home
	if refusal.Copied {
		return nodeAttributeError(path.Root("migrate_local_home"), "Migrated Home Still Unusable", node,
			fmt.Sprintf("Nothing was mounted over %s, but the local %s was already copied into BeeGFS, and %s there is still not a home %s can log in with (%s)",
				mountPath, mountPath, home, admin, slurm.PitfallRef("P9")),
			fmt.Sprintf("The copy stays on BeeGFS: it overwrote nothing there. Repair %s/.ssh/authorized_keys on BeeGFS (owned by %s, UID %d), through a node that mounts it, then apply again; the next copy adds only what is missing.",
				home, admin, refusal.Account.UID), refusal)
	}
	return nodeAttributeError(path.Root("migrate_local_home"), "Mount Would Lock Out "+admin, node,
		fmt.Sprintf("Nothing was mounted and nothing changed: BeeGFS mounted over %s would hide the local %s, and %s logs in with its key from there (%s)",
			mountPath, home, admin, slurm.PitfallRef("P9")),
		fmt.Sprintf("Create %s with .ssh/authorized_keys on BeeGFS first, owned by %s (UID %d), or set migrate_local_home = true to copy the local %s into BeeGFS before mounting.",
			home, admin, refusal.Account.UID, mountPath), refusal)
}

func (r *beegfsClientResource) readClient(ctx context.Context, node, mountPath string) (*transport.Host, beegfs.ClientState, diag.Diagnostics) {
	var diags diag.Diagnostics
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return nil, beegfs.ClientState{}, diags
	}
	st, err := beegfs.ReadClient(ctx, h, mountPath)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Client", node, "Reading the client's package, service, files and mount failed", adviceRead, err))
	}
	return h, st, diags
}

// readClientOfState is how Read and Delete begin: the state, and what its node holds at its
// mount path. ok is false once diags holds an error.
func (r *beegfsClientResource) readClientOfState(ctx context.Context, from tfsdk.State, diags *diag.Diagnostics) (
	m beegfsClientModel, h *transport.Host, st beegfs.ClientState, ok bool) {
	if m, ok = modelFrom[beegfsClientModel](ctx, from, diags); !ok {
		return m, nil, st, false
	}
	h, st, readDiags := r.readClient(ctx, m.Node.ValueString(), m.settings().MountPath)
	diags.Append(readDiags...)
	return m, h, st, !diags.HasError()
}

// checkClientInstalled gates on the installed release: the files the provider edits differ
// between majors, and an unknown one is refused rather than guessed.
func checkClientInstalled(node string, st beegfs.ClientState) diag.Diagnostic {
	if !st.Installed() {
		return nodeError("BeeGFS Not Installed", node, "The package "+beegfs.ClientPackage+" is not installed",
			"Install it from ThinkParQ's repository (with linux-headers for the running kernel, as the guide says), then apply again.", nil)
	}
	if _, err := beegfs.ParseRelease(st.Version); err != nil {
		return nodeError("Unsupported BeeGFS Version", node, "The installed "+beegfs.ClientPackage+" is "+st.Version, "Install BeeGFS 7.x or 8.x.", err)
	}
	return nil
}

func describeMount(m beegfs.Mount) string {
	if m.Target == "" {
		return "nothing"
	}
	return fmt.Sprintf("%s (%s on %s)", m.FSType, m.Source, m.Target)
}

func (r *beegfsClientResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, _, st, ok := r.readClientOfState(ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node, set := state.Node.ValueString(), state.settings()
	if !st.Installed() {
		resp.State.RemoveResource(ctx)
		return
	}
	status := describeDrift(st.Problems(set))
	warnDrift(&resp.Diagnostics, "BeeGFS client", map[string]string{node: status})
	state.MgmtdHost = types.StringValue(st.MgmtdHost())
	state.Mounted = types.BoolValue(st.MountedAt(set.MountPath, set.FSType))
	state.Version = types.StringValue(st.Version)
	state.Status = types.StringValue(status)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete stops and disables the client, which unmounts BeeGFS. Nothing on BeeGFS is touched,
// and the local directory underneath is visible again.
func (r *beegfsClientResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, h, st, ok := r.readClientOfState(ctx, req.State, &resp.Diagnostics)
	if !ok || !st.Installed() {
		return
	}
	node, set := state.Node.ValueString(), state.settings()
	busy := "A process working in " + set.MountPath + " keeps it busy: fuser -vm " + set.MountPath + " there names it."
	if err := beegfs.DisableNow(ctx, h, beegfs.ServiceClient); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Stop BeeGFS Client", node, "Stopping and disabling "+beegfs.ServiceClient+" failed", busy, err))
		return
	}
	after, err := beegfs.ReadClient(ctx, h, set.MountPath)
	switch {
	case err != nil:
		resp.Diagnostics.Append(nodeError("Cannot Read BeeGFS Client", node, "Reading the client's state after stopping it failed", adviceRead, err))
	case after.MountedAt(set.MountPath, set.FSType):
		resp.Diagnostics.Append(nodeError("BeeGFS Still Mounted", node,
			fmt.Sprintf("%s is stopped and disabled, but BeeGFS is still mounted at %s", beegfs.ServiceClient, set.MountPath), busy, nil))
	}
}

// ImportState takes the node name; the mount and management host are read from its files.
func (r *beegfsClientResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !nodeRefPattern.MatchString(req.ID) {
		resp.Diagnostics.Append(invalidImportID(req.ID, "NODE, the node's name", "gpu01", ""))
		return
	}
	// The mount path is not known before the files are read; the default tells which
	// filesystem findmnt reports where the guide mounts.
	_, st, diags := r.readClient(ctx, req.ID, beegfs.DefaultClientMountPath)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	set, err := st.ImportedSettings()
	if err != nil || !st.Installed() {
		resp.Diagnostics.Append(nodeError("No BeeGFS Client To Import", req.ID, "The node has no BeeGFS client set up",
			"Create the resource instead: it runs the check of "+slurm.PitfallRef("P9")+" before the first mount.", err))
		return
	}
	if set.MountPath != beegfs.DefaultClientMountPath {
		_, st, diags = r.readClient(ctx, req.ID, set.MountPath)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		if set, err = st.ImportedSettings(); err != nil {
			resp.Diagnostics.Append(nodeError("No BeeGFS Client To Import", req.ID, "The node's client changed while it was imported", "Import again.", err))
			return
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &beegfsClientModel{
		ID: types.StringValue(req.ID), Node: types.StringValue(req.ID), MgmtdHost: types.StringValue(set.Mgmtd),
		MountPath: types.StringValue(set.MountPath), MigrateLocalHome: types.BoolValue(false), ExpectedFSType: types.StringValue(set.FSType),
		Mounted: types.BoolValue(st.MountedAt(set.MountPath, set.FSType)), Version: types.StringValue(st.Version), Status: types.StringValue(describeDrift(st.Problems(set))),
	})...)
}
