package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
)

var (
	_ resource.ResourceWithConfigure      = (*beegfsTargetResource)(nil)
	_ resource.ResourceWithImportState    = (*beegfsTargetResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*beegfsTargetResource)(nil)
	_ resource.ResourceWithValidateConfig = (*beegfsTargetResource)(nil)
)

const (
	beegfsTargetResourceName = "gpucluster_beegfs_target"
	defaultStoragePath       = "/data/beegfs-storage"
	beegfsTargetIDFormat     = "NODE:PATH"
	installBeeGFSAdvice      = "Install it from ThinkParQ's repository (the BeeGFS quick start), then plan again."
	adviceStorageLists       = "Nothing was written. Repair " + beegfs.KeyStorageDirectory + " and " + beegfs.KeyFsUUID + " by hand: comma-separated lists, " +
		"one UUID per directory in the same order, or no UUID at all, then run again."
)

// NewBeegfsTargetResource returns the gpucluster_beegfs_target resource.
func NewBeegfsTargetResource() guardedResource { return &beegfsTargetResource{} }

type beegfsTargetResource struct{ cluster *cluster }

type beegfsTargetModel struct {
	ID               types.String `tfsdk:"id"`
	Node             types.String `tfsdk:"node"`
	Path             types.String `tfsdk:"path"`
	NodeNumID        types.Int64  `tfsdk:"node_num_id"`
	TargetID         types.Int64  `tfsdk:"target_id"`
	MgmtdHost        types.String `tfsdk:"mgmtd_host"`
	ForceDestroyData types.Bool   `tfsdk:"force_destroy_data"`
	AllowWithData    types.Bool   `tfsdk:"allow_deregister_with_data"`
	FsUUID           types.String `tfsdk:"fs_uuid"`
	FsUUIDCheck      types.Bool   `tfsdk:"fs_uuid_check"`
	Mountpoint       types.String `tfsdk:"mountpoint"`
	Version          types.String `tfsdk:"version"`
	Pin              types.String `tfsdk:"beegfs_version"`
	Status           types.String `tfsdk:"status"`
}

// storagePackages is what beegfs_version pins on a storage node. Every target of a node shares
// its beegfs-storage, so they are given the same version.
var storagePackages = beegfsPackages(beegfs.StoragePackage, beegfs.ServiceStorage).
	noting("Every target of a node shares its `" + beegfs.StoragePackage + "`: give them all the same `beegfs_version`.")

func (m beegfsTargetModel) identity(c *cluster) beegfs.TargetIdentity {
	return beegfs.TargetIdentity{
		Host:      c.canonicalNode(m.Node.ValueString()),
		Directory: m.Path.ValueString(),
		NodeNumID: m.NodeNumID.ValueInt64(),
		TargetID:  m.TargetID.ValueInt64(),
	}
}

func (m beegfsTargetModel) nodeName() string { return m.Node.ValueString() }

// recorded is the filesystem the target was set up on, "" while unknown.
func (m beegfsTargetModel) recorded() (mountpoint, uuid string) {
	return knownString(m.Mountpoint), knownString(m.FsUUID)
}

func (r *beegfsTargetResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_beegfs_target"
}

func (r *beegfsTargetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	numID := []validator.Int64{int64validator.Between(beegfs.MinNumID, beegfs.MaxNumID)}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One BeeGFS storage target, set up as the guide does: `beegfs-setup-storage -p PATH -s NODE -i TARGET -m MGMT` runs " +
			"**once**, on a missing or empty directory, and never again. A directory that is already initialised with the same " +
			"`" + beegfs.NodeNumIDFile + "` and `" + beegfs.TargetNumIDFile + "` is adopted; one with other IDs is refused, naming both. " +
			"One that beegfs-setup-storage prepared without `-s` and `-i` (`" + beegfs.FormatFile + "` and no ID files, before its first start) is adopted " +
			"and gets `node_num_id` and `target_id` as those options would write them.\n\n" +
			"The safety interlock is kept in `" + beegfs.StorageConfPath + "`: `" + beegfs.KeyAllowFirstRunInit + " = false`, and `" +
			beegfs.KeyFsUUID + "` aligned with `" + beegfs.KeyStorageDirectory + "` (see `fs_uuid_check`). Both are read as `" + beegfs.ServiceStorage +
			"` reads them: comma-separated, empty elements ignored, so the leading empty element `beegfs-setup-storage` writes and the bare path of its `-r` " +
			"are the same list; lists the provider changes are written in the guide's form, with the leading comma, and a list it does not change keeps its form. " +
			"Lists of unequal length (a `" + beegfs.KeyFsUUID + "` that is not empty and does not name one UUID per directory) are refused, " +
			"as the daemon refuses them. A systemd drop-in `" + beegfs.SystemdUnitDir + "/" + beegfs.ServiceStorage + ".service.d/target-TARGET.conf` " +
			"with `RequiresMountsFor=` the path's mountpoint stops `" + beegfs.ServiceStorage + "` from starting while the filesystem is missing; " +
			"the guide's own `storage.conf`, or any drop-in of the unit requiring that mountpoint, does the same: it is no drift, none of the provider's is added beside it, and destroy leaves it. " +
			"The service is enabled and started, and restarted only when its config changed; the unit is `Type=simple`, so after a start the apply " +
			"waits until the daemon has registered with the management service, and fails with the daemon's own line when it exits (a refusal by the " +
			"interlock, a missing `" + beegfs.ConnAuthPath + "`) or does not register in time.\n\n" +
			"The plan refuses a path on the root filesystem (it would land on the OS disk), a `" + beegfs.KeyFsUUID + "` that does not " +
			"match the mounted filesystem, and a `target_id` or `node_num_id` already used by another target of the configuration or " +
			"of the host's config. A filesystem that is not mounted any more (the guide's RAID array that did not assemble) shows as " +
			"a problem in the plan, never as a new target.\n\n" +
			"A configuration may declare a node and path only once; the plan refuses a second resource for it when both name the node " +
			"the same way (a node the provider's `nodes` list knows by name and address counts as one). Across provider aliases " +
			"this is not checked: Terraform does not tell the provider which resource it plans.\n\n" +
			"Destroy takes the target out of `" + beegfs.KeyStorageDirectory + "` and `" + beegfs.KeyFsUUID + "` (the lists stay aligned) " +
			"and removes its drop-in. When the host's config lists other targets, `" +
			beegfs.ServiceStorage + "` is restarted and keeps serving them; with the last target it is stopped and disabled. " +
			"The last target leaves the lists too, as the package shipped them: a service started again by hand never brings a " +
			"destroyed target back online behind Terraform's back. The data directory stays untouched with its ID files, so a " +
			"resource declared again with the same path and IDs adopts it; `force_destroy_data` deletes it as well.\n\n" +
			"On 8.x destroy then deletes the target from the management service (`" + beegfs.CLIPath + " target delete --yes storage:ID`, and with the " +
			"host's last target `node delete` of its storage node), run on `mgmtd_host`, where the guide runs `beegfs` and `cert.pem` and `conn.auth` are; " +
			"it needs the `" + beegfs.CLIPackage + "` package there. Without it the guide's `beegfs health check` would go on listing the target. " +
			"The management service deletes a target whatever files still use it: the refusal for a target that holds chunks comes first. A " +
			"management service that cannot be asked leaves the target registered, with a warning that says what to run by hand.\n\n" +
			"The node needs the `" + beegfs.StoragePackage + "` package and `" + beegfs.ConnAuthPath + "`: `depends_on` the " +
			"`gpucluster_beegfs_management` resource that distributes it.\n\n" +
			"Import with `terraform import " + beegfsTargetResourceName + ".NAME " + beegfsTargetIDFormat + "` (`gpu02:/data/beegfs-storage`); " +
			"the IDs are read from the target's ID files.",
		Attributes: map[string]schema.Attribute{
			"id":   computedKeptAttribute("`" + beegfsTargetIDFormat + "`."),
			"node": nodeAttribute("Node, by name or address, that runs `" + beegfs.ServiceStorage + "` for this target. Changing it replaces the resource."),
			"path": schema.StringAttribute{
				MarkdownDescription: "Target directory, on a filesystem of its own (the guide's RAID10 at `/data`). Defaults to `" + defaultStoragePath + "`. Changing it replaces the resource.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(defaultStoragePath),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"node_num_id": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("Numeric storage node ID (`-s`), %d to %d. All targets of one host share it. Changing it replaces the resource, which the plan refuses for an initialised directory.", beegfs.MinNumID, beegfs.MaxNumID),
				Required:            true,
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
				Validators:          numID,
			},
			"target_id": schema.Int64Attribute{
				MarkdownDescription: "Numeric target ID (`-i`). Defaults to the guide's numbering `node_num_id * 100 + 1` (node 2 gets target 201), and is kept in state. Changing it replaces the resource, which the plan refuses for an initialised directory.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown(), int64planmodifier.RequiresReplace()},
				Validators:          numID,
			},
			"mgmtd_host": schema.StringAttribute{
				MarkdownDescription: "Management host (`-m`, `" + beegfs.KeyMgmtdHost + "`): an address or host name. Changing it edits the config in place and restarts the service.",
				Required:            true,
			},
			"force_destroy_data": schema.BoolAttribute{
				MarkdownDescription: "When `true`, destroy also deletes the target directory with all its data. " +
					"**This is unrecoverable**: BeeGFS keeps no other copy of the chunks stored on this target. Only a directory that holds this target's " +
					"`" + beegfs.NodeNumIDFile + "` and `" + beegfs.TargetNumIDFile + "` (or is empty or gone) on the filesystem it was set up on is deleted; " +
					"anything else refuses the destroy before it changes anything. Defaults to `false`, which leaves the data untouched.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"allow_deregister_with_data": schema.BoolAttribute{
				MarkdownDescription: "Destroy without `force_destroy_data` deregisters the target (out of `" + beegfs.StorageConfPath + "`'s lists, its drop-in removed) and leaves its directory " +
					"and files on the disk. While the target still holds file chunks (files under `chunks/` or `buddymir/`), the plan and the destroy refuse it: every BeeGFS file with a " +
					"chunk there would become unreadable. Move the data off the target first (`beegfs migrate`), or set this to `true`, and apply, to deregister it anyway; the chunks " +
					"stay on the disk. Defaults to `false`.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"fs_uuid": computedKeptAttribute("UUID of the filesystem the target was set up on, as findmnt reports it; `" + beegfs.KeyFsUUID + "` names it " +
				"when `fs_uuid_check` is set."),
			"fs_uuid_check": schema.BoolAttribute{
				MarkdownDescription: "Whether `" + beegfs.KeyFsUUID + "` names `fs_uuid` for this target, so that `" + beegfs.ServiceStorage + "` refuses to start " +
					"on any other filesystem (the guide's interlock). `true` for a directory the provider sets up. A target set up with `beegfs-setup-storage -u` is " +
					"listed with no UUID, which BeeGFS does not check; such a target is adopted as it is (imported, or created over the initialised directory): " +
					"`false`, and the provider invents no UUID for it. Set it to `true` to have the apply add the UUID (and restart the service). " +
					"BeeGFS checks every target of a host or none, so the plan refuses that while another target of the host is listed without a UUID, " +
					"and it refuses a new target there too, since `beegfs-setup-storage` lists one for it. `false` never removes a UUID that is listed. `" +
					beegfs.KeyAllowFirstRunInit + " = false` is kept either way.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"mountpoint":     computedKeptAttribute("Mountpoint of that filesystem, which the drop-in's `RequiresMountsFor` names."),
			"version":        computedKeptAttribute("Installed version of `" + beegfs.StoragePackage + "` (`dpkg-query`). A plan that changes `beegfs_version` shows it going to the wanted version."),
			"beegfs_version": storagePackages.schemaAttribute(),
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or what the last refresh found different on the node (\"filesystem missing: ...\", \"interlock: ...\", " +
					"\"beegfs-storage is inactive\", a changed drop-in or ID file). A plan that sets it back to `" + inSync + "` repairs the node.",
				Computed: true,
			},
		},
	}
}

func (r *beegfsTargetResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *beegfsTargetResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateModel(ctx, req, resp, beegfsTargetModel.validate)
}

// validate refuses, with no node asked, what the setup script and the config lists cannot take.
func (m beegfsTargetModel) validate() diag.Diagnostics {
	diags := refuseSettings(
		settingCheck{"path", m.Path, beegfs.ValidatePath, "Invalid Storage Path", "The path cannot be a BeeGFS storage directory",
			"Use a clean absolute path below the target's own filesystem, such as " + defaultStoragePath + "."},
		settingCheck{"mgmtd_host", m.MgmtdHost, beegfs.ValidateMgmtdHost, "Invalid Management Host", "mgmtd_host is passed to beegfs-setup-storage -m",
			"Use the management node's address or host name, as in the guide's -m 10.0.0.10."},
	)
	if m.TargetID.IsNull() && !m.NodeNumID.IsNull() && !m.NodeNumID.IsUnknown() {
		_, noDefault := defaultTargetID(m.NodeNumID.ValueInt64())
		diags.Append(noDefault...)
	}
	return diags
}

// ModifyPlan fills the ID and the default target ID, refuses IDs declared twice in the
// configuration, and asks the node, in one round trip, whether the target can be set up
// there: the package, the filesystem, the interlock lists and the IDs on disk.
func (r *beegfsTargetResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		r.warnDestroy(ctx, req, resp)
		return
	}
	plan, state, creating, ok := planAndState[beegfsTargetModel](ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	if !plan.Node.IsUnknown() && !plan.Path.IsUnknown() {
		plan.ID = types.StringValue(nodePathID(plan.Node.ValueString(), plan.Path.ValueString()))
	}
	if plan.TargetID.IsUnknown() && !plan.NodeNumID.IsUnknown() {
		id, diags := defaultTargetID(plan.NodeNumID.ValueInt64())
		if resp.Diagnostics.Append(diags...); diags.HasError() {
			return
		}
		plan.TargetID = types.Int64Value(id)
	}
	plan.Status = types.StringValue(inSync)
	if !creating && plan.Node.Equal(state.Node) {
		if v, ok := storagePackages.plannedVersion(plan.Node.ValueString(), plan.Pin, knownString(state.Version), &resp.Diagnostics); ok {
			plan.Version = v
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || r.cluster == nil ||
		plan.Node.IsUnknown() || plan.Path.IsUnknown() || plan.NodeNumID.IsUnknown() || plan.TargetID.IsUnknown() {
		return
	}
	want := plan.identity(r.cluster)
	if attr, err := r.cluster.declaredTargets.declare(want); err != nil {
		resp.Diagnostics.Append(settingError(path.Root(attr), "Storage Target ID Already Used",
			"Another "+beegfsTargetResourceName+" in this configuration uses the same ID", "Give every target its own target_id, and every storage host its own node_num_id.", err))
		return
	}
	if (!creating && resp.Plan.Raw.Equal(req.State.Raw)) || !r.cluster.settingsKnown() {
		return
	}
	node := plan.Node.ValueString()
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	mountpoint, uuid := state.recorded()
	hs, diags := checkTargetHost(ctx, h, node, want, mountpoint, uuid, creating)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	resp.Diagnostics.Append(checkHostIDs(ctx, h, node, want, hs)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.FsUUIDCheck = resolveFsUUIDCheck(plan.FsUUIDCheck, hs, want.Directory)
	resp.Diagnostics.Append(checkInterlockEdit(node, hs, want.Directory, plan.FsUUIDCheck.ValueBool())...)
	if creating {
		plan.FsUUID = types.StringValue(hs.Mount.UUID)
		plan.Mountpoint = types.StringValue(hs.Mount.Target)
		plan.Version = types.StringValue(hs.Version)
		if v, ok := storagePackages.plannedVersion(node, plan.Pin, hs.Version, &resp.Diagnostics); ok {
			plan.Version = v
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *beegfsTargetResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *beegfsTargetModel) diag.Diagnostics {
		return r.converge(ctx, m, true)
	})
}

func (r *beegfsTargetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *beegfsTargetModel) diag.Diagnostics {
		return r.converge(ctx, m, false)
	})
}

// converge sets the target up once (Create only), then makes the interlock, the drop-in and
// the service what they should be, all under the host's lock.
func (r *beegfsTargetResource) converge(ctx context.Context, m *beegfsTargetModel, creating bool) diag.Diagnostics {
	var diags diag.Diagnostics
	node := m.Node.ValueString()
	if m.TargetID.IsUnknown() {
		id, idDiags := defaultTargetID(m.NodeNumID.ValueInt64())
		if idDiags.HasError() {
			return idDiags
		}
		m.TargetID = types.Int64Value(id)
	}
	want := m.identity(r.cluster)
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return diags
	}
	unlock, err := h.Lock(ctx)
	if err != nil {
		diags.Append(nodeError("Cannot Lock Node", node, "Taking the host lock failed", adviceLock, err))
		return diags
	}
	defer unlock()
	upgraded, diags := storagePackages.pinBeegfs(ctx, r.cluster, node, beegfs.ServiceStorage, m.Pin)
	if diags.HasError() {
		return diags
	}
	mountpoint, uuid := m.recorded()
	hs, diags := checkTargetHost(ctx, h, node, want, mountpoint, uuid, creating)
	if diags.HasError() {
		return diags
	}
	// Again under the lock: the plan skips this when the hosts were not reachable yet, and
	// another apply may have set up a target since.
	if diags.Append(checkHostIDs(ctx, h, node, want, hs)...); diags.HasError() {
		return diags
	}
	m.FsUUIDCheck = resolveFsUUIDCheck(m.FsUUIDCheck, hs, want.Directory)
	if diags.Append(checkInterlockEdit(node, hs, want.Directory, m.FsUUIDCheck.ValueBool())...); diags.HasError() {
		return diags
	}
	if !hs.Dir.Initialised() {
		if !creating {
			diags.Append(nodeAttributeError(path.Root("path"), "Storage Target Not Initialised", node,
				want.Directory+" has no "+beegfs.NodeNumIDFile+" any more", "Refresh: a target that is really gone is then planned anew.", nil))
			return diags
		}
		setUp := func() (beegfs.StorageHost, diag.Diagnostics) {
			return setUpTarget(ctx, h, node, want, m.MgmtdHost.ValueString())
		}
		if hs.Dir.AwaitsIDs() {
			setUp = func() (beegfs.StorageHost, diag.Diagnostics) { return completeTarget(ctx, h, node, want) }
		}
		var setUpDiags diag.Diagnostics
		hs, setUpDiags = setUp()
		if diags.Append(setUpDiags...); diags.HasError() {
			return diags
		}
	}
	mount := hs.Mount
	confChanged, writeDiags := writeStorageInterlock(ctx, h, node, hs, want.Directory, m.FsUUIDCheck.ValueBool(), m.MgmtdHost.ValueString())
	if diags.Append(writeDiags...); diags.HasError() {
		return diags
	}
	if _, err := beegfs.WriteStorageDropIn(ctx, h, h, hs, want.TargetID, mount.Target); err != nil {
		diags.Append(nodeError("Cannot Write Drop-In", node, "Writing the RequiresMountsFor drop-in for "+beegfs.ServiceStorage+" failed", adviceWrite, err))
		return diags
	}
	if diags.Append(startServer(ctx, h, node, beegfs.ServiceStorage, "BeeGFS Storage", confChanged || upgraded, hs.Service.Running(),
		"Read its refusal below. A missing "+beegfs.ConnAuthPath+" comes from gpucluster_beegfs_management (depends_on it).")...); diags.HasError() {
		return diags
	}
	m.ID = types.StringValue(nodePathID(node, want.Directory))
	m.FsUUID = types.StringValue(mount.UUID)
	m.Mountpoint = types.StringValue(mount.Target)
	m.Version = types.StringValue(hs.Version)
	m.Status = types.StringValue(inSync)
	return diags
}

func (r *beegfsTargetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, h, ok := stateOnNode[beegfsTargetModel](ctx, r.cluster, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	want := state.identity(r.cluster)
	hs, diags := readStorage(ctx, h, node, want)
	if resp.Diagnostics.Append(diags...); diags.HasError() {
		return
	}
	mountpoint, uuid := state.recorded()
	onFilesystem := beegfs.OnRecordedFilesystem(hs.Mount, mountpoint, uuid)
	if !hs.Dir.Initialised() && onFilesystem && (!hs.Dir.Exists || hs.Dir.Empty) {
		// Gone from the filesystem it was set up on: really gone, not merely unmounted, nor
		// stripped of its ID files with its data still there.
		resp.State.RemoveResource(ctx)
		return
	}
	if !onFilesystem {
		resp.Diagnostics.Append(storageStore.filesystemMissing(true, node, want.Directory, mountpoint, uuid, hs.Mount))
	}
	if mgmtd := hs.MgmtdHost(); mgmtd != "" {
		state.MgmtdHost = types.StringValue(mgmtd)
	}
	if state.FsUUIDCheck.IsNull() {
		// A state from before the attribute: the provider always wrote the check then.
		state.FsUUIDCheck = types.BoolValue(true)
	}
	problems := beegfs.StorageDrift(hs, beegfs.StorageWant{Target: want, Mountpoint: mountpoint, FsUUID: uuid, CheckFsUUID: state.FsUUIDCheck.ValueBool()})
	state.Status = types.StringValue(describeDrift(problems))
	if len(problems) > 0 && onFilesystem {
		resp.Diagnostics.Append(nodeWarning("Drift Detected On "+node, node,
			"The storage target "+want.Directory+" differs from its configuration: "+strings.Join(problems, "; "), "Apply repairs what it can.", nil))
	}
	state.ID = types.StringValue(nodePathID(node, want.Directory))
	state.Version = types.StringValue(hs.Version)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete takes the target out of beegfs-storage.conf and removes its drop-in. The service
// is restarted for the host's other targets, and stopped and disabled only with the last one.
// The data stays unless force_destroy_data is set; then the directory goes as well, but only
// when it is provably this target on its own filesystem, checked before anything changes.
func (r *beegfsTargetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, h, ok := stateOnNode[beegfsTargetModel](ctx, r.cluster, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	want := state.identity(r.cluster)
	unlock, err := h.Lock(ctx)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Lock Node", node, "Taking the host lock failed", adviceLock, err))
		return
	}
	defer unlock()
	hs, diags := readStorage(ctx, h, node, want)
	if resp.Diagnostics.Append(diags...); diags.HasError() {
		return
	}
	removal, err := hs.RemoveTarget(want.Directory)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Remove Target From Config", node, beegfs.StorageConfPath+" cannot be edited safely, so nothing was changed", adviceStorageLists, err))
		return
	}
	force := state.ForceDestroyData.ValueBool()
	if !force && !state.AllowWithData.ValueBool() {
		// Only the refusal: what the plan warned of needs no second warning.
		if refused := deregisterCheck(ctx, h, node, want.Directory, want.TargetID, false); refused.HasError() {
			resp.Diagnostics.Append(refused...)
			return
		}
	}
	if force {
		mountpoint, uuid := state.recorded()
		if diags := checkWipe(node, want, hs, mountpoint, uuid); diags.HasError() {
			resp.Diagnostics.Append(diags...)
			return
		}
	}
	resp.Diagnostics.Append(removeTarget(ctx, h, node, want, hs, removal)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.cluster.deregisterStorage(ctx, node, state.MgmtdHost.ValueString(), want, hs, removal.Remaining == 0)...)
	if resp.Diagnostics.HasError() || !force {
		return
	}
	if err := beegfs.WipeTarget(ctx, h, want.Directory); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Delete Storage Target", node, "Deleting "+want.Directory+" failed", adviceWipe, err))
	}
}

// ImportState takes NODE:PATH and reads the IDs from the target's ID files.
func (r *beegfsTargetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, dir, err := parseNodePathID(req.ID)
	if err != nil {
		resp.Diagnostics.Append(invalidImportID(req.ID, beegfsTargetIDFormat+", the node and the target directory", "gpu02:"+defaultStoragePath, "Original Error: "+err.Error()))
		return
	}
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	hs, err := beegfs.ReadStorageHost(ctx, h, dir, 0)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read BeeGFS Storage", node, "Reading "+dir+" and "+beegfs.StorageConfPath+" failed", adviceRead, err))
		return
	}
	nodeNumID, target, err := beegfs.DirIDs(dir, hs.Dir)
	if err != nil {
		resp.Diagnostics.Append(nodeError("No Storage Target To Import", node, dir+" is not an initialised storage target",
			"Check the path (and that its filesystem is mounted), or create the resource instead.", err))
		return
	}
	mgmtd := hs.MgmtdHost()
	if mgmtd == "" {
		resp.Diagnostics.Append(nodeError("No Storage Target To Import", node, beegfs.StorageConfPath+" names no "+beegfs.KeyMgmtdHost,
			"Create the resource instead; it adopts the initialised directory.", nil))
		return
	}
	m := beegfsTargetModel{
		ID:               types.StringValue(nodePathID(node, dir)),
		Node:             types.StringValue(node),
		Path:             types.StringValue(dir),
		NodeNumID:        types.Int64Value(nodeNumID),
		TargetID:         types.Int64Value(target),
		MgmtdHost:        types.StringValue(mgmtd),
		ForceDestroyData: types.BoolValue(false),
		AllowWithData:    types.BoolValue(false),
		FsUUID:           types.StringValue(hs.Mount.UUID),
		FsUUIDCheck:      types.BoolValue(!hs.ListsUnchecked(dir)),
		Mountpoint:       types.StringValue(hs.Mount.Target),
		Status:           types.StringValue(inSync),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
