package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
)

var (
	_ resource.ResourceWithConfigure      = (*beegfsManagementResource)(nil)
	_ resource.ResourceWithImportState    = (*beegfsManagementResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*beegfsManagementResource)(nil)
	_ resource.ResourceWithValidateConfig = (*beegfsManagementResource)(nil)
)

const (
	// defaultMgmtdDBFile is the guide's db-file.
	defaultMgmtdDBFile = "/beegfs/mgmtd/mgmtd.sqlite"
	mgmtdResourceName  = "gpucluster_beegfs_management"
)

// NewBeegfsManagementResource returns the gpucluster_beegfs_management resource.
func NewBeegfsManagementResource() guardedResource { return &beegfsManagementResource{} }

type beegfsManagementResource struct{ cluster *cluster }

type beegfsManagementModel struct {
	ID             types.String `tfsdk:"id"`
	Node           types.String `tfsdk:"node"`
	DBFile         types.String `tfsdk:"db_file"`
	AuthNodes      types.Set    `tfsdk:"auth_nodes"`
	ConnAuthSHA256 types.String `tfsdk:"conn_auth_sha256"`
	TLSCertSHA256  types.String `tfsdk:"tls_cert_sha256"`
	Version        types.String `tfsdk:"version"`
	BeegfsVersion  types.String `tfsdk:"beegfs_version"`
	Mountpoint     types.String `tfsdk:"mountpoint"`
	FsUUID         types.String `tfsdk:"fs_uuid"`
	Status         types.String `tfsdk:"status"`
	NodeStatus     types.Map    `tfsdk:"node_status"`
}

// mgmtdPackages is what beegfs_version pins on the management node.
var mgmtdPackages = beegfsPackages(beegfs.MgmtdPackage, beegfs.ServiceMgmtd)

func (r *beegfsManagementResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_beegfs_management"
}

func (r *beegfsManagementResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	nodeRef := nodeRefValidator
	stable := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The BeeGFS management service (`" + beegfs.ServiceMgmtd + "`) on the controller, as the guide sets it up: `db-file` set in `" +
			beegfs.MgmtdTOMLPath + "`, the database initialised with `beegfs-mgmtd --init` **exactly once**, a drop-in `RequiresMountsFor=` the filesystem " +
			"holding the database, and the service enabled and started. The package `" + beegfs.MgmtdPackage + "` must be installed (BeeGFS 7.x or 8.x; " +
			"7.x keeps its store in the directory of `db_file` and has no TLS files).\n\n" +
			"The initialisation never runs again: before it, the apply looks for the database on the host, so re-creating the resource after the state " +
			"was lost, or importing it, adopts the existing database. A create is refused, at plan and again at apply before anything changes, while `" +
			beegfs.MgmtdTOMLPath + "` points the service at another database that exists (its `db-file`, or `" + beegfs.DefaultMgmtdDBFile + "`, where " +
			"`beegfs-mgmtd --init` puts it when none is set): the create would initialise a new, empty database at `db_file` and restart the service on it. " +
			"Import that database, or set `db_file` to it (one on the root filesystem is first moved to `db_file` by hand, as the refusal says); " +
			"move it away by hand only if it is really to be discarded.\n\n" +
			"The shared secret `" + beegfs.ConnAuthPath + "` (128 random bytes from `/dev/urandom`, mode `0400`) is generated **on the controller** when it " +
			"is missing, and the TLS key `" + beegfs.TLSKeyPath + "` (ECDSA P-256, `0400`) with its self-signed certificate `" + beegfs.TLSCertPath +
			"` (valid for the node's name and address, `0644`) when they are missing. `conn.auth` and `cert.pem` are then copied, host to host through the " +
			"provider's memory, to every node in `auth_nodes`. The secret and the key never enter the state, the plan or the logs; the state keeps SHA-256 fingerprints.\n\n" +
			"A drop-in written by hand under another name (a cluster built by the guide's commands) guards the service as well when it requires the same mountpoint: " +
			"it is no drift, and the provider writes no drop-in of its own beside it.\n\n" +
			"Destroy stops and disables `" + beegfs.ServiceMgmtd + "` and removes its own drop-in; the database, the shared files and drop-ins written by hand stay.\n\n" +
			"Import with the node's name: `terraform import gpucluster_beegfs_management.cluster login01`, or `login01@gpu01,gpu02` to import `auth_nodes` too. " +
			"`db_file` is the database the configuration names: its `db-file`, or `" + beegfs.DefaultMgmtdDBFile + "` when none is set.",
		Attributes: map[string]schema.Attribute{
			"id":   computedKeptAttribute("The node. Refer to it from the metadata, target and client resources (`depends_on`), so they start after the secret is on their node."),
			"node": nodeAttribute("Node, by name or address, that runs the management service (the guide's login01). Changing it replaces the resource."),
			"db_file": schema.StringAttribute{
				MarkdownDescription: "The management database, `db-file` in `" + beegfs.MgmtdTOMLPath + "`. Its directory must be on a filesystem of its own " +
					"(the guide's RAID1 at /beegfs), not the root filesystem; the plan refuses it otherwise. Defaults to `" + defaultMgmtdDBFile + "`. " +
					"Changing it replaces the resource: the new path gets a new, empty database, and the old one is left where it is.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString(defaultMgmtdDBFile),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"auth_nodes": schema.SetAttribute{
				MarkdownDescription: "Nodes, by name or address, that get an identical copy of `" + beegfs.ConnAuthPath + "` (`0400`) and `" + beegfs.TLSCertPath +
					"` (`0644`) from the controller: every node that runs a BeeGFS service or the client. The controller always has them. " +
					"Adding a node copies the files there; removing one leaves its copies in place. Defaults to none.",
				Optional:    true,
				Computed:    true,
				ElementType: types.StringType,
				Default:     setdefault.StaticValue(stringSet(nil)),
				Validators:  []validator.Set{setvalidator.ValueStringsAre(nodeRef)},
			},
			"conn_auth_sha256": schema.StringAttribute{
				MarkdownDescription: "SHA-256 of `" + beegfs.ConnAuthPath + "` on the controller, in hex; compare with `sha256sum " + beegfs.ConnAuthPath + "` on a node.",
				Computed:            true,
				PlanModifiers:       stable,
			},
			"tls_cert_sha256": schema.StringAttribute{
				MarkdownDescription: "SHA-256 of `" + beegfs.TLSCertPath + "` on the controller, in hex; empty with BeeGFS 7.x, which has no management API certificate.",
				Computed:            true,
				PlanModifiers:       stable,
			},
			"version":        computedKeptAttribute("Installed version of `" + beegfs.MgmtdPackage + "` (`dpkg-query`). A plan that changes `beegfs_version` shows it going to the wanted version."),
			"beegfs_version": mgmtdPackages.schemaAttribute(),
			"mountpoint":     computedKeptAttribute("Mountpoint of the filesystem holding the directory of `db_file` (`findmnt`), the drop-in's `RequiresMountsFor`."),
			"fs_uuid": schema.StringAttribute{
				MarkdownDescription: "UUID of that filesystem (`findmnt`), recorded when the database is set up or imported. While the directory of `db_file` " +
					"is on another filesystem (the guide's array that did not assemble), the plan fails with \"Management Filesystem Missing\" and nothing is " +
					"initialised or changed; the resource is planned anew only when the database is gone from this very filesystem.",
				Computed:      true,
				PlanModifiers: stable,
			},
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or what the last refresh found different on the controller: the filesystem missing, `db-file` changed in the config, the drop-in " +
					"missing or changed, a shared file missing, `conn.auth` or `key.pem` readable or writable by others than root (the guide's `chmod 400`), " +
					"the service stopped or disabled. A plan that changes it back to `" + inSync + "` repairs it.",
				Computed: true,
			},
			"node_status": schema.MapAttribute{
				MarkdownDescription: "Per node of `auth_nodes`, `" + inSync + "` or what differs there (\"" + beegfs.ConnAuthPath + " missing on gpu02\", \"different " +
					beegfs.TLSCertPath + " on gpu02\", a `conn.auth` that is not root's alone), compared by fingerprint, owner and mode. " +
					"A plan that changes an entry back to `" + inSync + "` copies the files again.",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
	}
}

func (r *beegfsManagementResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *beegfsManagementResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var dbFile types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("db_file"), &dbFile)...)
	if dbFile.IsNull() || dbFile.IsUnknown() {
		return
	}
	if err := beegfs.ValidateDBFile(dbFile.ValueString()); err != nil {
		resp.Diagnostics.Append(settingError(path.Root("db_file"), "Invalid Database Path", "db_file cannot hold the management database",
			"Use a clean absolute path without blanks or commas, in a directory on the filesystem of its own.", err))
	}
}

func (m beegfsManagementModel) nodeName() string { return m.Node.ValueString() }

// recorded is the filesystem the database was set up on, "" while unknown.
func (m beegfsManagementModel) recorded() (mountpoint, uuid string) {
	return knownString(m.Mountpoint), knownString(m.FsUUID)
}

// ModifyPlan marks the controller and every node in sync, so drift shows as a change, and on
// create reads the controller: the package must be installed and the database's directory
// must not be on the root filesystem. An existing database is announced as adopted. A change
// to an existing one is refused while the database's filesystem is not the recorded one.
func (r *beegfsManagementResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	plan, ok := modelFrom[beegfsManagementModel](ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(inSync))...)
	if fullyKnown(plan.AuthNodes) {
		nodeNames := setStrings(ctx, plan.AuthNodes, &resp.Diagnostics)
		resp.Diagnostics.Append(planNodeStatus(ctx, req, resp, nodeNames)...)
	}
	creating := req.State.Raw.IsNull()
	var state beegfsManagementModel
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() && plan.Node.Equal(state.Node) {
			mgmtdPackages.planVersion(ctx, resp, plan.Node.ValueString(), plan.BeegfsVersion, knownString(state.Version))
		}
	}
	if resp.Diagnostics.HasError() || (!creating && resp.Plan.Raw.Equal(req.State.Raw)) ||
		r.cluster == nil || !r.cluster.settingsKnown() || plan.Node.IsUnknown() || plan.DBFile.IsUnknown() {
		return
	}
	node, dbFile := plan.Node.ValueString(), plan.DBFile.ValueString()
	if !creating {
		// A replacement's create half is planned again, with no prior state.
		if !resp.Diagnostics.HasError() && plan.Node.Equal(state.Node) && plan.DBFile.Equal(state.DBFile) {
			mountpoint, uuid := state.recorded()
			_, diags := r.readController(ctx, node, dbFile, mountpoint, uuid)
			resp.Diagnostics.Append(diags...)
		}
		return
	}
	c, diags := r.readController(ctx, node, dbFile, "", "")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if resp.Diagnostics.Append(checkLiveDatabase(ctx, node, dbFile, c)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("mountpoint"), types.StringValue(c.mh.Mount.Target))...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("fs_uuid"), types.StringValue(c.mh.Mount.UUID))...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("version"), types.StringValue(c.mh.PackageVersion))...)
	mgmtdPackages.planVersion(ctx, resp, node, plan.BeegfsVersion, c.mh.PackageVersion)
	if c.mh.Initialised(c.rel) {
		resp.Diagnostics.Append(nodeAttributeWarning(path.Root("db_file"), "Existing BeeGFS Management Database Adopted", node,
			"The management database "+dbFile+" already exists", "It is kept: beegfs-mgmtd --init does not run again.", nil))
	}
}

func (r *beegfsManagementResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *beegfsManagementModel) diag.Diagnostics {
		return r.converge(ctx, m, true)
	})
}

func (r *beegfsManagementResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *beegfsManagementModel) diag.Diagnostics {
		return r.converge(ctx, m, false)
	})
}

// converge brings the controller to the guide's setup, each step only when needed, then copies
// the shared files to the auth nodes and records what it finds afterwards. Only a create
// initialises the database, and only on the filesystem it planned with.
func (r *beegfsManagementResource) converge(ctx context.Context, m *beegfsManagementModel, creating bool) diag.Diagnostics {
	node, dbFile := m.Node.ValueString(), m.DBFile.ValueString()
	mountpoint, uuid := m.recorded()
	upgraded, diags := mgmtdPackages.pinBeegfs(ctx, r.cluster, node, beegfs.ServiceMgmtd, m.BeegfsVersion)
	if diags.HasError() {
		return diags
	}
	c, more := r.readController(ctx, node, dbFile, mountpoint, uuid)
	if diags.Append(more...); diags.HasError() {
		return diags
	}
	h, mh, rel := c.h, c.mh, c.rel
	if creating {
		// Again at apply: the plan reads no node while the provider's settings are unknown, and
		// a database may have appeared since the plan.
		if diags.Append(checkLiveDatabase(ctx, node, dbFile, c)...); diags.HasError() {
			return diags
		}
	}
	if !creating && !mh.Initialised(rel) {
		diags.Append(nodeAttributeError(path.Root("db_file"), "Management Database Missing", node,
			"The management database "+dbFile+" is not there any more, and an update never initialises one",
			"Refresh: a database that is really gone from its filesystem is then planned anew.", nil))
		return diags
	}
	o, _ := r.cluster.override(node)
	restart, err := beegfs.SetUpMgmtd(ctx, h, mh, rel, dbFile, beegfs.TLSNames{Node: o.name, Address: firstNonEmpty(o.address, node)})
	if err != nil {
		diags.Append(nodeError("Cannot Set Up BeeGFS Management", node, "Setting up beegfs-mgmtd failed",
			"Fix the cause named below and apply again; steps already done are not repeated, and the database is never initialised twice.", err))
		return diags
	}
	if err := beegfs.StartMgmtd(ctx, h, restart || upgraded); err != nil {
		diags.Append(nodeError("Cannot Start BeeGFS Management", node, "Starting beegfs-mgmtd failed",
			"Its journal is quoted below (journalctl -u beegfs-mgmtd).", err))
		return diags
	}
	authNodes := setStrings(ctx, m.AuthNodes, &diags)
	diags.Append(r.distribute(ctx, h, node, rel, authNodes)...)
	if diags.HasError() {
		return diags
	}
	mh, err = beegfs.ReadMgmtd(ctx, h, dbFile)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Management State", node, "Reading beegfs-mgmtd's state after the apply failed", adviceRead, err))
		return diags
	}
	r.recordFilesystem(m, mh)
	mountpoint, uuid = m.recorded()
	if problems := beegfs.MgmtdProblems(mh, rel, dbFile, mountpoint, uuid); len(problems) > 0 {
		diags.Append(nodeError("BeeGFS Management Not Running As Configured", node, "After the apply: "+strings.Join(problems, "; "),
			"Check journalctl -u beegfs-mgmtd on the node, then apply again.", nil))
		return diags
	}
	status, statusDiags := r.copyStatus(ctx, authNodes, node, mh)
	diags.Append(statusDiags...)
	diags.Append(failedCopies(status)...)
	r.record(m, mh, rel, status)
	return diags
}

// recordFilesystem records the database's filesystem once, when it is set up or imported (or
// first read by a provider that did not record it yet), and keeps it afterwards.
func (r *beegfsManagementResource) recordFilesystem(m *beegfsManagementModel, mh beegfs.MgmtdHost) {
	if knownString(m.Mountpoint) == "" {
		m.Mountpoint = types.StringValue(mh.Mount.Target)
	}
	if knownString(m.FsUUID) == "" {
		m.FsUUID = types.StringValue(mh.Mount.UUID)
	}
}

// record stores what the controller holds now; a release that cannot be read (the package
// was removed) is the status.
func (r *beegfsManagementResource) record(m *beegfsManagementModel, mh beegfs.MgmtdHost, rel beegfs.Release, status map[string]string) {
	m.ID = m.Node
	m.ConnAuthSHA256 = types.StringValue(mh.ConnAuthSHA256)
	m.TLSCertSHA256 = types.StringValue(mh.CertSHA256)
	m.Version = types.StringValue(mh.PackageVersion)
	r.recordFilesystem(m, mh)
	mountpoint, uuid := m.recorded()
	m.Status = types.StringValue(describeDrift(beegfs.MgmtdProblems(mh, rel, m.DBFile.ValueString(), mountpoint, uuid)))
	m.NodeStatus = statusMap(status)
}

func (r *beegfsManagementResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, h, ok := stateOnNode[beegfsManagementModel](ctx, r.cluster, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node, dbFile := state.Node.ValueString(), state.DBFile.ValueString()
	mh, err := beegfs.ReadMgmtd(ctx, h, dbFile)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read BeeGFS Management State", node, "Reading beegfs-mgmtd's package, config, service and files failed", adviceRead, err))
		return
	}
	mountpoint, uuid := state.recorded()
	onFilesystem := beegfs.OnRecordedFilesystem(mh.Mount, mountpoint, uuid)
	rel, relErr := mh.Release()
	if onFilesystem && relErr == nil && !mh.Initialised(rel) {
		// Gone from the filesystem it was set up on: really gone, not merely unmounted.
		resp.State.RemoveResource(ctx)
		return
	}
	if !onFilesystem {
		resp.Diagnostics.Append(mgmtdStore.filesystemMissing(true, node, beegfs.MgmtdStoreDir(dbFile), mountpoint, uuid, mh.Mount))
	}
	authNodes := setStrings(ctx, state.AuthNodes, &resp.Diagnostics)
	status, diags := r.copyStatus(ctx, authNodes, node, mh)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.record(&state, mh, rel, status)
	if relErr != nil {
		// The package is gone, the database and the shared files are not: the plan says so.
		state.Status = types.StringValue(relErr.Error())
	}
	if s := state.Status.ValueString(); s != inSync && onFilesystem {
		resp.Diagnostics.Append(nodeWarning("Drift Detected On "+node, node, "beegfs-mgmtd differs from its configuration: "+s, "Apply repairs it.", nil))
	}
	warnDrift(&resp.Diagnostics, "copy of the BeeGFS shared files", status)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete stops and disables beegfs-mgmtd and removes its drop-in; the database and the shared
// files stay, so a new resource adopts them.
func (r *beegfsManagementResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteDaemon[beegfsManagementModel](ctx, r.cluster, mgmtdDaemon, req, resp)
}

// ImportState takes NODE or NODE@AUTHNODE,...; db_file comes from the config on the node, and
// a node without a database is refused: creating the resource initialises one.
func (r *beegfsManagementResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, authNodes, ok := parseManagementImportID(req.ID)
	if !ok {
		resp.Diagnostics.Append(invalidImportID(req.ID, "NODE, or NODE@NODE1,NODE2,... to import auth_nodes too", "login01@gpu01,gpu02", ""))
		return
	}
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	st, err := beegfs.ReadHost(ctx, h, beegfs.HostQuery{Packages: []string{beegfs.MgmtdPackage}, Files: []string{beegfs.MgmtdTOMLPath}})
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read BeeGFS Management State", node, "Reading "+beegfs.MgmtdTOMLPath+" failed", adviceRead, err))
		return
	}
	rel, err := beegfs.ParseRelease(st.Packages[beegfs.MgmtdPackage])
	if err != nil || rel.Major != 8 {
		resp.Diagnostics.Append(nodeError("Cannot Import BeeGFS Management", node, "Import needs BeeGFS 8.x installed, which names its database in "+beegfs.MgmtdTOMLPath,
			"Install BeeGFS 8.x, or create the resource with db_file set.", err))
		return
	}
	dbFile, err := beegfs.ConfiguredMgmtdStore(rel, st.Files[beegfs.MgmtdTOMLPath].Content)
	if err == nil {
		err = beegfs.ValidateDBFile(dbFile)
	}
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Import BeeGFS Management", node, "No usable db-file in "+beegfs.MgmtdTOMLPath,
			"Create the resource instead: it sets db-file and initialises the database.", err))
		return
	}
	mh, err := beegfs.ReadMgmtd(ctx, h, dbFile)
	if err == nil && !mh.Initialised(rel) {
		err = fmt.Errorf("%s does not exist", dbFile)
	}
	if err != nil {
		resp.Diagnostics.Append(nodeError("No BeeGFS Management Database To Import", node, "The database named in "+beegfs.MgmtdTOMLPath+" is not there",
			"Create the resource instead: it initialises the database.", err))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &beegfsManagementModel{
		ID:             types.StringValue(node),
		Node:           types.StringValue(node),
		DBFile:         types.StringValue(dbFile),
		AuthNodes:      stringSet(authNodes),
		ConnAuthSHA256: types.StringValue(mh.ConnAuthSHA256),
		TLSCertSHA256:  types.StringValue(mh.CertSHA256),
		Version:        types.StringValue(mh.PackageVersion),
		BeegfsVersion:  types.StringNull(),
		Mountpoint:     types.StringValue(mh.Mount.Target),
		FsUUID:         types.StringValue(mh.Mount.UUID),
		Status:         types.StringValue(inSync),
		NodeStatus:     allInSync(authNodes),
	})...)
}

func parseManagementImportID(id string) (node string, authNodes []string, ok bool) {
	node, list, hasList := strings.Cut(id, "@")
	if hasList && list != "" {
		authNodes = strings.Split(list, ",")
	}
	for _, n := range append([]string{node}, authNodes...) {
		if !nodeRefPattern.MatchString(n) {
			return "", nil, false
		}
	}
	slices.Sort(authNodes)
	return node, slices.Compact(authNodes), true
}
