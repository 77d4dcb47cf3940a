package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
)

var (
	_ resource.ResourceWithConfigure      = (*beegfsMetadataResource)(nil)
	_ resource.ResourceWithImportState    = (*beegfsMetadataResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*beegfsMetadataResource)(nil)
	_ resource.ResourceWithValidateConfig = (*beegfsMetadataResource)(nil)
)

const defaultMetaPath = "/beegfs/meta"

// NewBeegfsMetadataResource returns the gpucluster_beegfs_metadata resource.
func NewBeegfsMetadataResource() guardedResource { return &beegfsMetadataResource{} }

type beegfsMetadataResource struct{ cluster *cluster }

type beegfsMetadataModel struct {
	ID          types.String `tfsdk:"id"`
	Node        types.String `tfsdk:"node"`
	Path        types.String `tfsdk:"path"`
	NodeNumID   types.Int64  `tfsdk:"node_num_id"`
	MgmtdHost   types.String `tfsdk:"mgmtd_host"`
	FsUUID      types.String `tfsdk:"fs_uuid"`
	FsUUIDCheck types.Bool   `tfsdk:"fs_uuid_check"`
	Mountpoint  types.String `tfsdk:"mountpoint"`
	Version     types.String `tfsdk:"version"`
	Pin         types.String `tfsdk:"beegfs_version"`
	Status      types.String `tfsdk:"status"`
}

// metaPackages is what beegfs_version pins on a metadata node.
var metaPackages = beegfsPackages(beegfs.MetaPackage, beegfs.ServiceMeta)

func (r *beegfsMetadataResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_beegfs_metadata"
}

func (r *beegfsMetadataResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The BeeGFS metadata service (`" + beegfs.ServiceMeta + "`) with the guide's safety interlock. `beegfs-setup-meta -p PATH -s ID -m MGMT` " +
			"runs **once**, only on a missing or empty directory; a directory already initialised with the same `nodeNumID` is adopted without running it, " +
			"and one with another ID is refused, naming both; one that beegfs-setup-meta prepared without `-s` (`" + beegfs.FormatFile + "` and no `nodeNumID`, " +
			"before its first start) is adopted and gets `node_num_id` as `-s` would write it. `" + beegfs.MetaConfPath + "` then gets `storeAllowFirstRunInit = false` and `storeFsUUID` set " +
			"to the UUID of the filesystem holding `path`, as a single value with no comma (see `fs_uuid_check`), and a drop-in makes systemd start `" + beegfs.ServiceMeta +
			"` only once that filesystem is mounted (`RequiresMountsFor=`). The service is enabled and started; the unit is `Type=simple`, so after " +
			"a start the apply waits until the daemon has registered with the management service, and fails with the daemon's own line when it exits " +
			"(a refusal by the interlock, a missing `" + beegfs.ConnAuthPath + "`) or does not register in time. The package `" + beegfs.MetaPackage + "` must be installed.\n\n" +
			"Make it depend on `gpucluster_beegfs_management`: the daemon refuses to start without `" + beegfs.ConnAuthPath + "`.\n\n" +
			"A drop-in written by hand under another name (the guide's own steps) that requires the same mountpoint guards the service as well: it is no drift, and no drop-in of the provider's is added beside it.\n\n" +
			"Destroy stops and disables the service and removes its own drop-in; the metadata directory and drop-ins written by hand are left untouched. " +
			"On 8.x it then deletes the node from the management service (`" + beegfs.CLIPath + " node delete --yes meta:ID`, run on `mgmtd_host`, which needs the `" +
			beegfs.CLIPackage + "` package there). The management service keeps the node that holds the root directory, and a management service that " +
			"cannot be asked leaves the node registered: both are warnings that say what to run by hand.\n\n" +
			"Import with `NODE:PATH`: `terraform import gpucluster_beegfs_metadata.cluster login01:/beegfs/meta`; `node_num_id` is read from the directory.",
		Attributes: map[string]schema.Attribute{
			"id":   computedKeptAttribute("`NODE:PATH`."),
			"node": nodeAttribute("Node, by name or address, that runs the metadata service (the guide's login01). Changing it replaces the resource."),
			"path": schema.StringAttribute{
				MarkdownDescription: "The metadata directory, `storeMetaDirectory`. It must be on a filesystem of its own, never the root filesystem; the plan refuses it otherwise. " +
					"Defaults to `" + defaultMetaPath + "`. Changing it replaces the resource; the old directory stays.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString(defaultMetaPath),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"node_num_id": schema.Int64Attribute{
				MarkdownDescription: "Numeric node ID, `-s` of beegfs-setup-meta, written once into `nodeNumID`. Defaults to `1`, as in the guide. Changing it replaces the resource.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(1),
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
				Validators:          []validator.Int64{int64validator.Between(beegfs.MinNumID, beegfs.MaxNumID)},
			},
			"mgmtd_host": schema.StringAttribute{
				MarkdownDescription: "Address or name of the management service, `-m` of beegfs-setup-meta and `sysMgmtdHost` (the guide's 10.0.0.10). Changing it edits the config and restarts the service.",
				Required:            true,
			},
			"fs_uuid": computedKeptAttribute("UUID of the filesystem holding `path` (`findmnt`), the value of `storeFsUUID` when `fs_uuid_check` is set."),
			"fs_uuid_check": schema.BoolAttribute{
				MarkdownDescription: "Whether `storeFsUUID` names `fs_uuid`, so that `" + beegfs.ServiceMeta + "` refuses to start on any other filesystem (the guide's " +
					"interlock). `true` for a directory the provider sets up. A directory set up with `beegfs-setup-meta -u` has an empty `storeFsUUID`, which BeeGFS " +
					"does not check; it is adopted as it is (imported, or created over the initialised directory): `false`, and the provider invents no UUID for it. " +
					"Set it to `true` to have the apply write the UUID (and restart the service). `false` never removes a UUID that is set. " +
					"`storeAllowFirstRunInit = false` is kept either way.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"mountpoint":     computedKeptAttribute("Mountpoint of the filesystem holding `path`, the drop-in's `RequiresMountsFor`."),
			"version":        computedKeptAttribute("Installed version of `" + beegfs.MetaPackage + "` (`dpkg-query`). A plan that changes `beegfs_version` shows it going to the wanted version."),
			"beegfs_version": metaPackages.schemaAttribute(),
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or what the last refresh found different: an interlock key changed by hand, `storeFsUUID` not naming the mounted " +
					"filesystem, `sysMgmtdHost` changed, the drop-in missing or changed, the service stopped or disabled. A plan that changes it back to `" + inSync + "` repairs it.",
				Computed: true,
			},
		},
	}
}

func (r *beegfsMetadataResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *beegfsMetadataResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateModel(ctx, req, resp, beegfsMetadataModel.validate)
}

// validate refuses, with no node asked, what beegfs-setup-meta and the config cannot take.
func (m beegfsMetadataModel) validate() diag.Diagnostics {
	return refuseSettings(
		settingCheck{"path", m.Path, beegfs.ValidatePath, "Invalid Metadata Directory", "path cannot be a metadata directory",
			"Use a clean absolute path without blanks or commas."},
		settingCheck{"mgmtd_host", m.MgmtdHost, beegfs.ValidateMgmtdHost, "Invalid Management Host", "mgmtd_host cannot be passed to beegfs-setup-meta",
			"Use an IP address or a DNS name."},
	)
}

func (m beegfsMetadataModel) nodeName() string { return m.Node.ValueString() }

// recorded is the filesystem the metadata directory was set up on, "" while unknown.
func (m beegfsMetadataModel) recorded() (mountpoint, uuid string) {
	return knownString(m.Mountpoint), knownString(m.FsUUID)
}

func (m beegfsMetadataModel) want() beegfs.MetaWant {
	mountpoint, uuid := m.recorded()
	return beegfs.MetaWant{Dir: m.Path.ValueString(), Mgmtd: m.MgmtdHost.ValueString(), Mountpoint: mountpoint, FsUUID: uuid, CheckFsUUID: m.FsUUIDCheck.ValueBool()}
}

// resolveFsUUIDCheck fills fs_uuid_check when it is not configured: no check for a directory
// the config names with an empty storeFsUUID (beegfs-setup-meta -u), the guide's otherwise.
func (m *beegfsMetadataModel) resolveFsUUIDCheck(mh beegfs.MetaHost) {
	if m.FsUUIDCheck.IsUnknown() || m.FsUUIDCheck.IsNull() {
		m.FsUUIDCheck = types.BoolValue(!mh.ListsUnchecked(m.Path.ValueString()))
	}
}

// ModifyPlan marks the service in sync, so drift shows as a change. On create it reads the
// node: package installed, path on a filesystem of its own, an initialised directory only
// with the configured node ID, and no other initialised store named in beegfs-meta.conf; the
// filesystem's UUID and mountpoint are then known at plan. A change to an existing one is
// refused while its filesystem is not the recorded one or the interlock names another.
func (r *beegfsMetadataResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	plan, ok := modelFrom[beegfsMetadataModel](ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(inSync))...)
	creating := req.State.Raw.IsNull()
	var state beegfsMetadataModel
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() && plan.Node.Equal(state.Node) {
			metaPackages.planVersion(ctx, resp, plan.Node.ValueString(), plan.Pin, knownString(state.Version))
		}
	}
	if resp.Diagnostics.HasError() || (!creating && resp.Plan.Raw.Equal(req.State.Raw)) ||
		r.cluster == nil || !r.cluster.settingsKnown() || plan.Node.IsUnknown() || plan.Path.IsUnknown() || plan.NodeNumID.IsUnknown() {
		return
	}
	node, dir := plan.Node.ValueString(), plan.Path.ValueString()
	if !creating {
		if resp.Diagnostics.HasError() || !plan.Node.Equal(state.Node) || !plan.Path.Equal(state.Path) || !plan.NodeNumID.Equal(state.NodeNumID) {
			// A replacement: Terraform plans its create half again, with no prior state.
			return
		}
		mountpoint, uuid := state.recorded()
		n, diags := r.readNode(ctx, node, dir, mountpoint, uuid)
		resp.Diagnostics.Append(diags...)
		if !diags.HasError() {
			_, diags = keptTarget(node, dir, uuid, n.mh)
			resp.Diagnostics.Append(diags...)
		}
		return
	}
	n, diags := r.readNode(ctx, node, dir, "", "")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(checkMetaSetup(ctx, node, dir, plan.NodeNumID.ValueInt64(), n)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if n.mh.Dir.Initialised() {
		resp.Diagnostics.Append(nodeAttributeWarning(path.Root("path"), "Existing BeeGFS Metadata Directory Adopted", node,
			dir+" is already initialised with the configured node_num_id", "It is kept: beegfs-setup-meta does not run.", nil))
	}
	plan.resolveFsUUIDCheck(n.mh)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("fs_uuid_check"), plan.FsUUIDCheck)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("fs_uuid"), types.StringValue(n.target.FsUUID))...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("mountpoint"), types.StringValue(n.mh.Mount.Target))...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("version"), types.StringValue(n.mh.PackageVersion))...)
	metaPackages.planVersion(ctx, resp, node, plan.Pin, n.mh.PackageVersion)
}

func (r *beegfsMetadataResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *beegfsMetadataModel) diag.Diagnostics {
		return r.converge(ctx, m, true)
	})
}

func (r *beegfsMetadataResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *beegfsMetadataModel) diag.Diagnostics {
		return r.converge(ctx, m, false)
	})
}

// converge sets the directory up once (or adopts it) on create, writes the interlock and the
// drop-in, and starts the service, restarting it only when its config changed. An update
// keeps the recorded filesystem in the interlock.
func (r *beegfsMetadataResource) converge(ctx context.Context, m *beegfsMetadataModel, creating bool) diag.Diagnostics {
	node, dir, id, mgmtd := m.Node.ValueString(), m.Path.ValueString(), m.NodeNumID.ValueInt64(), m.MgmtdHost.ValueString()
	mountpoint, uuid := m.recorded()
	upgraded, diags := metaPackages.pinBeegfs(ctx, r.cluster, node, beegfs.ServiceMeta, m.Pin)
	if diags.HasError() {
		return diags
	}
	n, more := r.readNode(ctx, node, dir, mountpoint, uuid)
	if diags.Append(more...); diags.HasError() {
		return diags
	}
	target := n.target
	if creating {
		if diags.Append(checkMetaSetup(ctx, node, dir, id, n)...); diags.HasError() {
			return diags
		}
		var err error
		if n.mh, err = r.setupOnce(ctx, n.h, n.mh, dir, id, mgmtd); err != nil {
			diags.Append(nodeError("Cannot Set Up BeeGFS Metadata", node, "Setting up "+dir+" with beegfs-setup-meta failed",
				"Fix the cause named below and apply again; an initialised directory is never set up twice.", err))
			return diags
		}
	} else {
		var kept diag.Diagnostics
		if target, kept = keptTarget(node, dir, uuid, n.mh); kept.HasError() {
			return append(diags, kept...)
		}
	}
	m.resolveFsUUIDCheck(n.mh)
	if !m.FsUUIDCheck.ValueBool() {
		// No UUID is invented: the config keeps the one it names, or none.
		var err error
		if _, target.FsUUID, err = n.mh.ConfiguredMetaStore(); err != nil {
			diags.Append(nodeError("Cannot Configure BeeGFS Metadata", node, "Reading "+beegfs.MetaConfPath+" failed", adviceRead, err))
			return diags
		}
	}
	restart, err := r.configure(ctx, n.h, n.mh, n.rel, target, mgmtd)
	if err != nil {
		diags.Append(nodeError("Cannot Configure BeeGFS Metadata", node, "Writing the interlock to "+beegfs.MetaConfPath+" or the drop-in failed", adviceWrite, err))
		return diags
	}
	if diags.Append(startServer(ctx, n.h, node, beegfs.ServiceMeta, "BeeGFS Metadata", restart || upgraded, n.mh.Service.Running(),
		"A refusal naming storeFsUUID is the interlock: check that the filesystem of "+dir+" is mounted. "+
			"A missing conn.auth means gpucluster_beegfs_management has not copied it to this node yet: add it to auth_nodes and depends_on.")...); diags.HasError() {
		return diags
	}
	after, err := beegfs.ReadMeta(ctx, n.h, dir)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Metadata State", node, "Reading beegfs-meta's state after the apply failed", adviceRead, err))
		return diags
	}
	recordMeta(m, after)
	if problems := beegfs.MetaProblems(after, n.rel, m.want()); len(problems) > 0 {
		diags.Append(nodeError("BeeGFS Metadata Not Running As Configured", node, "After the apply: "+strings.Join(problems, "; "),
			"Check journalctl -u beegfs-meta on the node, then apply again.", nil))
	}
	return diags
}

// recordMeta stores what the node holds now. The filesystem is recorded once, when the
// directory is set up or imported, and kept afterwards: it is what the interlock names.
func recordMeta(m *beegfsMetadataModel, mh beegfs.MetaHost) {
	m.ID = types.StringValue(nodePathID(m.Node.ValueString(), m.Path.ValueString()))
	if m.FsUUIDCheck.IsNull() {
		// A state from before the attribute: the provider always wrote the check then.
		m.FsUUIDCheck = types.BoolValue(true)
	}
	if knownString(m.FsUUID) == "" {
		m.FsUUID = types.StringValue(mh.Mount.UUID)
	}
	if knownString(m.Mountpoint) == "" {
		m.Mountpoint = types.StringValue(mh.Mount.Target)
	}
	m.Version = types.StringValue(mh.PackageVersion)
	m.Status = types.StringValue(describeDrift(metaProblems(mh, m.want())))
}

func (r *beegfsMetadataResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, h, ok := stateOnNode[beegfsMetadataModel](ctx, r.cluster, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node, dir := state.Node.ValueString(), state.Path.ValueString()
	mh, err := beegfs.ReadMeta(ctx, h, dir)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read BeeGFS Metadata State", node, "Reading beegfs-meta's package, config, service and directory failed", adviceRead, err))
		return
	}
	mountpoint, uuid := state.recorded()
	onFilesystem := beegfs.OnRecordedFilesystem(mh.Mount, mountpoint, uuid)
	if onFilesystem && !mh.Dir.Initialised() {
		// Gone from the filesystem it was set up on: really gone, not merely unmounted.
		resp.State.RemoveResource(ctx)
		return
	}
	if !onFilesystem {
		resp.Diagnostics.Append(metaStore.filesystemMissing(true, node, dir, mountpoint, uuid, mh.Mount))
	} else if err := beegfs.CheckMetaNodeNumID(dir, mh.Dir, state.NodeNumID.ValueInt64()); err != nil {
		resp.Diagnostics.Append(nodeWarning("BeeGFS Metadata Node ID Changed", node, "The directory's nodeNumID is not the one in state",
			"The plan replaces the resource, which refuses to set up a used directory: restore the directory or change node_num_id.", err))
		if got, perr := beegfs.ParseNumID(beegfs.NodeNumIDFile, mh.Dir.NodeNumID); perr == nil {
			state.NodeNumID = types.Int64Value(int64(got))
		}
	}
	recordMeta(&state, mh)
	if s := state.Status.ValueString(); s != inSync && onFilesystem {
		resp.Diagnostics.Append(nodeWarning("Drift Detected On "+node, node, "beegfs-meta differs from its configuration: "+s, "Apply repairs it.", nil))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete stops and disables beegfs-meta and removes its drop-in; the metadata stays. The
// node then leaves the management service, unless it holds the root directory, which the
// management service keeps.
func (r *beegfsMetadataResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteDaemon[beegfsMetadataModel](ctx, r.cluster, metaDaemon, req, resp)
	if resp.Diagnostics.HasError() {
		return
	}
	var m beegfsMetadataModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if rel, err := beegfs.ParseRelease(m.Version.ValueString()); err != nil || rel.Major < 8 {
		return
	}
	resp.Diagnostics.Append(r.cluster.deregister(ctx, m.Node.ValueString(), m.MgmtdHost.ValueString(), nodeDeregistration("meta", m.NodeNumID.ValueInt64()), true)...)
}

// ImportState takes NODE:PATH; the node ID and management host come from the node.
func (r *beegfsMetadataResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, dir, err := parseNodePathID(req.ID)
	if err != nil {
		resp.Diagnostics.Append(invalidImportID(req.ID, "NODE:PATH", "login01:/beegfs/meta", "Original Error: "+err.Error()))
		return
	}
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	mh, err := beegfs.ReadMeta(ctx, h, dir)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read BeeGFS Metadata State", node, "Reading "+dir+" failed", adviceRead, err))
		return
	}
	id, err := beegfs.ParseNumID(beegfs.NodeNumIDFile, mh.Dir.NodeNumID)
	if err != nil || !mh.Dir.Initialised() {
		resp.Diagnostics.Append(nodeError("No BeeGFS Metadata Directory To Import", node, dir+" is not an initialised metadata directory",
			"Create the resource instead: it runs beegfs-setup-meta there.", err))
		return
	}
	conf, err := beegfs.ParseConf(mh.Config.Content)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Import BeeGFS Metadata", node, "Reading "+beegfs.MetaConfPath+" failed", adviceRead, err))
		return
	}
	mgmtd, _ := conf.Get(beegfs.KeyMgmtdHost)
	m := beegfsMetadataModel{
		Node:        types.StringValue(node),
		Path:        types.StringValue(dir),
		NodeNumID:   types.Int64Value(int64(id)),
		MgmtdHost:   types.StringValue(mgmtd),
		FsUUIDCheck: types.BoolValue(!mh.ListsUnchecked(dir)),
	}
	recordMeta(&m, mh)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
