package provider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure      = (*slurmAccountingResource)(nil)
	_ resource.ResourceWithImportState    = (*slurmAccountingResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*slurmAccountingResource)(nil)
	_ resource.ResourceWithValidateConfig = (*slurmAccountingResource)(nil)
)

// NewSlurmAccountingResource returns the gpucluster_slurm_accounting resource.
func NewSlurmAccountingResource() guardedResource { return &slurmAccountingResource{} }

type slurmAccountingResource struct{ cluster *cluster }

type slurmAccountingModel struct {
	ID              types.String   `tfsdk:"id"`
	Controller      types.String   `tfsdk:"controller"`
	Node            types.String   `tfsdk:"node"`
	DbdHost         types.String   `tfsdk:"dbd_host"`
	DbdPort         types.Int64    `tfsdk:"dbd_port"`
	Database        types.String   `tfsdk:"database"`
	DatabaseUser    types.String   `tfsdk:"database_user"`
	Password        types.String   `tfsdk:"database_password_wo"`
	PasswordVersion types.Int64    `tfsdk:"database_password_wo_version"`
	TRES            types.Set      `tfsdk:"tres"`
	Enforce         types.Set      `tfsdk:"enforce"`
	Status          types.String   `tfsdk:"status"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
}

const (
	slurmAccountingResourceName = "gpucluster_slurm_accounting"
	defaultAccountingDatabase   = "slurm_acct_db"
	defaultAccountingDBUser     = "slurm"
	// slurmdbdWait is the default bound of the wait for slurmdbd to answer sacctmgr after a
	// (re)start; its first start creates the database's tables.
	slurmdbdWait = 2 * time.Minute
)

// enforceValues are AccountingStorageEnforce's options.
var enforceValues = []string{"associations", "limits", "nojobs", "nosteps", "qos", "safe", "wckeys", "all"}

func (r *slurmAccountingResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_accounting"
}

func (r *slurmAccountingResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	sqlName := stringvalidator.RegexMatches(slurm.SQLNamePattern, "must be letters, digits and '_', at most 32, not starting with a digit")
	resp.Schema = schema.Schema{
		MarkdownDescription: "Slurm accounting: MariaDB and slurmdbd on a node (the controller unless `node` says otherwise), and the slurm.conf lines " +
			"that point slurmctld at them, in the guide's order: \"deploy MariaDB and slurmdbd first, then set AccountingStorageType=accounting_storage/slurmdbd, " +
			"and only then add the TRES list\".\n\n" +
			"Apply installs `mariadb-server`, `slurmdbd` and `slurm-client` with apt where missing (slurmdbd at the version of the Slurm packages the node has already, or else at the controller's, " +
			"such as its `slurm_version`, so that installing it upgrades nothing else and slurmdbd is never older than slurmctld), writes `" + slurm.MariaDBConfPath + "` (`innodb_snapshot_isolation` off, " +
			"since MariaDB 11.6.2 and later, Debian 13's 11.8 among them, otherwise fail slurmdbd's association updates with error 1020; `innodb_lock_wait_timeout = 900`, as Slurm asks; " +
			"slurmdbd's warning about `innodb_buffer_pool_size` is left to the admin, who knows the node's memory), creates the database and its user (with `mysql` as root over " +
			"the unix socket; see `database_user` for the accounts it never changes), writes `" + slurm.SlurmdbdConfPath + "` (owner SlurmUser, mode 0600, only when it changes), starts slurmdbd (restarted when the file " +
			"changed) and waits until `sacctmgr` gets an answer from it. It registers the cluster (the controller's `ClusterName`) in slurmdbd; when the ClusterID " +
			"slurmctld saved in `StateSaveLocation/clustername` is not the one slurmdbd has (a slurmctld that ran before accounting, or with another database), it removes " +
			"that file, so that slurmctld's next start takes slurmdbd's ID instead of stopping with `CLUSTER ID MISMATCH` (Slurm's own advice; jobs and the rest of the " +
			"state are kept). Only then does it write its " +
			"fragment `" + slurm.FragmentDir + "/" + slurm.AccountingFile + "` on the controller with `AccountingStorageType=accounting_storage/slurmdbd`, " +
			"`AccountingStorageHost`, `AccountingStoragePort` and, when set, `AccountingStorageTRES` and `AccountingStorageEnforce`. " + activationDoc + " Adding accounting to a running " +
			"controller is a **" + slurm.SettingClass("AccountingStorageType").String() + "**.\n\n" +
			"With this fragment on the controller, `AccountingStorageTRES=gres/gpu` is allowed (pitfall P2); set it here as `tres`, not in the controller's `extra`.\n\n" +
			"The database password is a write-only argument: it never enters the state or the plan, and reaches the node on standard input only. Terraform sends it on " +
			"every apply that creates or updates this resource; change `database_password_wo_version` to rotate it. Drift shows in `status`: slurmdbd or MariaDB " +
			"stopped, slurmdbd.conf or the MariaDB settings edited by hand (compared on the node without reading the password back), the database user's password " +
			"changed by hand (the file's password is tried on the node), packages removed. Destroy stops slurmdbd and removes " +
			"slurmdbd.conf and the fragment; the database, and with it every job's history, stays in MariaDB, and so does its user.\n\n" +
			"When `node` is not the controller, slurmctld reaches slurmdbd on `dbd_port` over the network: allow it with a `gpucluster_firewall_rule`. " +
			"Import with `NODE@CONTROLLER`, or with `CONTROLLER`, the resource's `id`, for slurmdbd on the node the controller's accounting names (`AccountingStorageHost`, the controller itself when it has none); `database_password_wo` is then needed in the configuration before the next update.",
		Attributes: map[string]schema.Attribute{
			"id":         computedKeptAttribute("The controller."),
			"controller": nodeAttribute("The controller node, as `gpucluster_slurm_controller.NAME.id`: where the fragment is kept and whose `ClusterName` is registered. Changing it replaces the resource."),
			"node": schema.StringAttribute{
				MarkdownDescription: "The node MariaDB and slurmdbd run on. Defaults to `controller`. It needs the cluster's MUNGE key (slurmdbd authenticates with MUNGE). Changing it replaces the resource.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{nodeRefValidator},
			},
			"dbd_host": computedKeptAttribute("`DbdHost` and `AccountingStorageHost`: the node's short host name (`hostname -s`), as slurmdbd insists on running on the host it names."),
			"dbd_port": schema.Int64Attribute{
				MarkdownDescription: "`DbdPort` and `AccountingStoragePort`. Defaults to " + strconv.Itoa(slurm.DefaultDbdPort) + ".",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(slurm.DefaultDbdPort),
				Validators:          []validator.Int64{int64validator.Between(1, 65535)},
			},
			"database": schema.StringAttribute{
				MarkdownDescription: "`StorageLoc`, the MariaDB database. Defaults to `" + defaultAccountingDatabase + "`. Changing it replaces the resource (the old database stays).",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(defaultAccountingDatabase),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{sqlName},
			},
			"database_user": schema.StringAttribute{
				MarkdownDescription: "`StorageUser`, the MariaDB user slurmdbd connects as, from localhost. Defaults to `" + defaultAccountingDBUser + "`. " +
					"MariaDB's own accounts (" + markdownList(slurm.BuiltinDatabaseUsers) + ") are refused. The provider changes only an account it created: it lists each one in `" +
					slurm.DatabaseUsersPath + "` on the node before creating it, and a plan that would take over an account MariaDB already has and the list does not name " +
					"is refused, when MariaDB runs on the node at plan time, and otherwise before the apply touches the account. An import of accounting set up by hand uses its account " +
					"as it is: the apply after it checks that `database_password_wo` opens the account and sets that account's password only when `database_password_wo_version` " +
					"later changes.",
				Optional:   true,
				Computed:   true,
				Default:    stringdefault.StaticString(defaultAccountingDBUser),
				Validators: []validator.String{sqlName, databaseUserValidator{}},
			},
			"database_password_wo": schema.StringAttribute{
				MarkdownDescription: "`StoragePass`: the database user's password, " + slurm.PasswordRule + ". Write-only (Terraform 1.11 or later): it is never stored in the state or shown in a plan.",
				Required:            true,
				Sensitive:           true,
				WriteOnly:           true,
			},
			"database_password_wo_version": schema.Int64Attribute{
				MarkdownDescription: "Change this number to apply a new `database_password_wo`: Terraform cannot see a change of a write-only value by itself.",
				Optional:            true,
			},
			"tres": schema.SetAttribute{
				MarkdownDescription: "`AccountingStorageTRES`, the resources tracked besides Slurm's default ones (cpu, mem, energy, node, billing, fs/disk, vmem, pages), for example `[\"gres/gpu\"]` for GPU hours per user. " +
					"Unset, Slurm's default list. " + classDoc(slurm.SettingClass("AccountingStorageTRES")),
				Optional:    true,
				ElementType: types.StringType,
				Validators: []validator.Set{setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(stringvalidator.RegexMatches(slurm.TRESNamePattern, "must be a TRES name such as gres/gpu"))},
			},
			"enforce": schema.SetAttribute{
				MarkdownDescription: "`AccountingStorageEnforce`: " + markdownList(enforceValues) + ". `limits` and `qos` make QOS limits such as MaxTRESPerUser apply (both imply `associations`: " +
					"jobs of users without an association are refused). Unset, nothing is enforced." + classDoc(slurm.SettingClass("AccountingStorageEnforce")),
				Optional:    true,
				ElementType: types.StringType,
				Validators:  []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(stringvalidator.OneOf(enforceValues...))},
			},
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or what the last refresh found different on the node (slurmdbd stopped, slurmdbd.conf changed by hand). A plan that changes it back to `" + inSync + "` repairs it.",
				Computed:            true,
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx, "Bounds of the wait for slurmdbd.",
				"How long to wait, after slurmdbd was started or restarted, for `sacctmgr` to get an answer from it (its first start creates the database's tables), as a Go duration such as `5m`. Defaults to `2m`."),
		},
	}
}

func (r *slurmAccountingResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig refuses a password slurmdbd.conf cannot hold, without quoting it: a
// validator's usual message repeats the value.
func (r *slurmAccountingResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var password types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("database_password_wo"), &password)...)
	if resp.Diagnostics.HasError() || password.IsNull() || password.IsUnknown() {
		return
	}
	if err := slurm.ValidatePassword([]byte(password.ValueString())); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("database_password_wo"), "Invalid Database Password",
			"The database password cannot be written to slurmdbd.conf as it is: "+err.Error()+". No host was asked or changed.")
	}
}

// ModifyPlan fills node and marks the accounting in sync, so drift shows as a change, and
// records the fragment for the activation's plan.
func (r *slurmAccountingResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		var state slurmAccountingModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() {
			frag := slurm.RemoveFragment(slurm.AccountingFile)
			r.cluster.planSlurmChange(state.Controller.ValueString(), &frag)
		}
		return
	}
	plan, ok := modelFrom[slurmAccountingModel](ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	if plan.Node.IsUnknown() && !plan.Controller.IsUnknown() && req.State.Raw.IsNull() {
		var configured types.String
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("node"), &configured)...)
		if configured.IsNull() {
			plan.Node = plan.Controller
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("node"), plan.Controller)...)
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(inSync))...)
	if plan.Controller.IsUnknown() || (!req.State.Raw.IsNull() && req.Plan.Raw.Equal(req.State.Raw)) {
		return
	}
	resp.Diagnostics.Append(r.checkDatabaseUser(ctx, plan, priorModel[slurmAccountingModel](ctx, req.State, &resp.Diagnostics), !req.State.Raw.IsNull())...)
	if resp.Diagnostics.HasError() {
		return
	}
	controller := plan.Controller.ValueString()
	a, known := plan.settings(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !known {
		r.cluster.planSlurmChange(controller, nil)
		return
	}
	frag, err := slurm.AccountingFragment(a)
	if err != nil {
		resp.Diagnostics.Append(invalidSetting(slurmAccountingResourceName, accountingAttr, err))
		return
	}
	r.cluster.planSlurmChange(controller, &frag)
	resp.Diagnostics.Append(r.cluster.previewSlurm(ctx, path.Root("tres"), controller, "the accounting settings", frag)...)
}

func (r *slurmAccountingResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, req.Config, nil, &resp.State, &resp.Diagnostics, createTimeout)
}

func (r *slurmAccountingResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, req.Config, &req.State, &resp.State, &resp.Diagnostics, updateTimeout)
}

// apply takes the password from the configuration, the only place a write-only value is, and
// bounds the wait for slurmdbd by the timeout that limit reads (create's or update's). prior is
// the state an update starts from, nil on create.
func (r *slurmAccountingResource) apply(ctx context.Context, plan tfsdk.Plan, config tfsdk.Config, prior, state *tfsdk.State, diags *diag.Diagnostics,
	limit timeoutReader) {
	var m slurmAccountingModel
	diags.Append(plan.Get(ctx, &m)...)
	var before *slurmAccountingModel
	if prior != nil {
		before = &slurmAccountingModel{}
		diags.Append(prior.Get(ctx, before)...)
	}
	var password types.String
	diags.Append(config.GetAttribute(ctx, path.Root("database_password_wo"), &password)...)
	if diags.HasError() {
		return
	}
	wait, limitDiags := limit(m.Timeouts, ctx, slurmdbdWait)
	diags.Append(limitDiags...)
	if diags.HasError() {
		return
	}
	pw := []byte(password.ValueString())
	diags.Append(r.converge(ctx, &m, r.databaseUserPolicy(m, before), pw, wait)...)
	for i := range pw {
		pw[i] = 0
	}
	if diags.HasError() {
		return
	}
	m.Password = types.StringNull()
	diags.Append(state.Set(ctx, &m)...)
}

// converge sets up MariaDB and slurmdbd on the node, registers the cluster, and only then
// writes the fragment that the activation puts into slurm.conf.
func (r *slurmAccountingResource) converge(ctx context.Context, m *slurmAccountingModel, policy slurm.DatabaseUserPolicy, password []byte, wait time.Duration) diag.Diagnostics {
	controller, node := m.Controller.ValueString(), m.node().ValueString()
	m.Node = types.StringValue(node)
	st, diags := r.cluster.readSlurmStatus(ctx, controller)
	if diags.HasError() {
		return diags
	}
	if st.Fragments.Controller == nil {
		diags.Append(nodeError("No Slurm Controller", controller, "The controller has no fragment "+slurm.FragmentDir+"/"+slurm.ControllerFile+" yet, so there is no ClusterName or SlurmUser to set accounting up for",
			"Set controller = gpucluster_slurm_controller.NAME.id, so the controller is created first. Nothing was changed.", nil))
		return diags
	}
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return diags
	}
	if err := slurm.CheckMunge(ctx, h); err != nil {
		diags.Append(mungeError(node, "slurmdbd", err))
		return diags
	}
	diags.Append(r.installDatabasePackages(ctx, h, node, controller)...)
	if diags.HasError() {
		return diags
	}
	host, err := slurm.Hostname(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read Host Name", node, "Reading the node's host name for DbdHost failed", "", err))
		return diags
	}
	m.DbdHost = types.StringValue(host)
	d := m.slurmdbd(st.Fragments.Controller.SlurmUser)
	if err := slurm.EnsureSlurmdbd(ctx, h, d, password, policy, wait); err != nil {
		if refused, ok := databaseUserRefused(node, err); ok {
			diags.Append(refused)
			return diags
		}
		diags.Append(nodeError("Cannot Start Slurmdbd", node, "Setting up MariaDB, "+slurm.SlurmdbdConfPath+" and slurmdbd failed",
			toolSaid(err, "Check journalctl -u mariadb -u slurmdbd there, then apply again: each step runs only when it has something to change. The fragment on the controller was not written, so slurmctld runs as before."), err))
		return diags
	}
	client := slurm.AccountingClient{Cluster: st.Fragments.Controller.ClusterName, Host: host, Port: int(m.DbdPort.ValueInt64())}
	if err := slurm.EnsureCluster(ctx, h, client); err != nil {
		diags.Append(nodeError("Cannot Register Cluster", node, "Adding the cluster "+client.Cluster+" to slurmdbd with sacctmgr failed", toolSaid(err, "Apply again once sacctmgr show cluster works there."), err))
		return diags
	}
	id, err := slurm.DatabaseClusterID(ctx, h, d.Database, client.Cluster)
	if err != nil {
		diags.Append(nodeError("Cannot Read ClusterID", node, "Reading the ID slurmdbd gave the cluster from MariaDB failed", "Apply again once mysql works there as root.", err))
		return diags
	}
	diags.Append(r.syncClusterID(ctx, controller, st.Fragments.Controller.StateSaveLocation, id)...)
	if diags.HasError() {
		return diags
	}
	a, known := m.settings(ctx, &diags)
	if diags.HasError() {
		return diags
	}
	if !known {
		diags.Append(unknownAtApply(slurmAccountingResourceName))
		return diags
	}
	frag, err := slurm.AccountingFragment(a)
	if err != nil {
		diags.Append(invalidSetting(slurmAccountingResourceName, accountingAttr, err))
		return diags
	}
	diags.Append(r.cluster.writeSlurmFragments(ctx, controller, frag)...)
	m.ID = m.Controller
	m.Status = types.StringValue(inSync)
	return diags
}

// syncClusterID lets the controller's next slurmctld take the ClusterID slurmdbd has for the
// cluster.
func (r *slurmAccountingResource) syncClusterID(ctx context.Context, controller, stateSaveLocation, id string) diag.Diagnostics {
	h, diags := r.cluster.slurmController(ctx, controller)
	if diags.HasError() {
		return diags
	}
	if err := slurm.SyncClusterID(ctx, h, stateSaveLocation, id); err != nil {
		diags.Append(nodeError("Cannot Reset ClusterID", controller, "slurmctld saved another ClusterID than slurmdbd's "+id+", and removing it failed",
			"Remove clustername in StateSaveLocation by hand before slurmctld restarts, or it stops with CLUSTER ID MISMATCH. The fragment was not written.", err))
	}
	return diags
}

func (r *slurmAccountingResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := readState(ctx, req, resp, r.read)
	if !ok {
		return
	}
	if state.Status.ValueString() != inSync {
		resp.Diagnostics.AddWarning("Drift Detected On "+state.node().ValueString(),
			fmt.Sprintf("Slurm accounting differs from its configuration: %s.\n\nApply repairs it.", state.Status.ValueString()))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// read fills m from the controller's fragment and the node's slurmdbd; found is false when
// the fragment is gone.
func (r *slurmAccountingResource) read(ctx context.Context, m *slurmAccountingModel) (found bool, diags diag.Diagnostics) {
	controller := m.Controller.ValueString()
	st, diags := r.cluster.readSlurmStatus(ctx, controller)
	if diags.HasError() || st.Fragments.Accounting == nil || st.Fragments.Controller == nil {
		return false, diags
	}
	m.setSettings(*st.Fragments.Accounting)
	node := m.node().ValueString()
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return false, diags
	}
	dbd, err := slurm.ReadSlurmdbd(ctx, h, m.slurmdbd(st.Fragments.Controller.SlurmUser))
	if err != nil {
		diags.Append(nodeError("Cannot Read Slurmdbd", node, "Reading slurmdbd's and MariaDB's state failed", "", err))
		return false, diags
	}
	m.ID, m.Node = m.Controller, types.StringValue(node)
	m.Status = types.StringValue(describeDrift(dbd.Drift()))
	m.Password = types.StringNull()
	return true, diags
}

// Delete removes the fragment, then stops slurmdbd and removes slurmdbd.conf. The database,
// and every job record in it, stays.
func (r *slurmAccountingResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[slurmAccountingModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(r.cluster.writeSlurmFragments(ctx, state.Controller.ValueString(), slurm.RemoveFragment(slurm.AccountingFile))...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := state.node().ValueString()
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	if err := slurm.StopSlurmdbd(ctx, h); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Stop Slurmdbd", node, "Stopping slurmdbd and removing "+slurm.SlurmdbdConfPath+" failed",
			"Stop it by hand (systemctl disable --now slurmdbd); the fragment is already removed.", err))
	}
}

// ImportState takes NODE@CONTROLLER, or CONTROLLER, the id the state shows, with slurmdbd on
// the node the controller's accounting fragment names; the database settings are read from
// slurmdbd.conf on the node, without its password.
func (r *slurmAccountingResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, controller, diags := parseAccountingImportID(req.ID)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	if !strings.Contains(req.ID, "@") {
		node, diags = r.slurmdbdNode(ctx, controller)
		resp.Diagnostics.Append(diags...)
		if diags.HasError() {
			return
		}
	}
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	conf, found, err := slurm.ReadSlurmdbdSettings(ctx, h)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read Slurmdbd", node, "Reading "+slurm.SlurmdbdConfPath+" failed", "", err))
		return
	}
	if !found {
		resp.Diagnostics.AddError("No Slurm Accounting To Import",
			fmt.Sprintf("%s has no %s: slurmdbd is not set up there. Create the resource instead.", node, slurm.SlurmdbdConfPath))
		return
	}
	m := slurmAccountingModel{
		ID: types.StringValue(controller), Controller: types.StringValue(controller), Node: types.StringValue(node),
		Database: types.StringValue(conf["storageloc"]), DatabaseUser: types.StringValue(conf["storageuser"]),
		Password: types.StringNull(), PasswordVersion: types.Int64Null(), Status: types.StringValue(inSync),
		TRES: types.SetNull(types.StringType), Enforce: types.SetNull(types.StringType),
		DbdHost: types.StringValue(conf["dbdhost"]), DbdPort: types.Int64Value(slurm.DefaultDbdPort), Timeouts: nullTimeouts(),
	}
	if p, err := strconv.Atoi(conf["dbdport"]); err == nil {
		m.DbdPort = types.Int64Value(int64(p))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// slurmdbdNode is the node slurmdbd runs on as the controller's accounting fragment names it
// (AccountingStorageHost), or the controller itself when it has no fragment, as on a controller
// set up by hand.
func (r *slurmAccountingResource) slurmdbdNode(ctx context.Context, controller string) (string, diag.Diagnostics) {
	st, diags := r.cluster.readSlurmStatus(ctx, controller)
	if diags.HasError() || st.Fragments.Accounting == nil || st.Fragments.Accounting.StorageHost == "" {
		return controller, diags
	}
	return st.Fragments.Accounting.StorageHost, diags
}

// parseAccountingImportID splits NODE@CONTROLLER; a bare CONTROLLER stands for both until
// ImportState reads where slurmdbd runs.
func parseAccountingImportID(id string) (node, controller string, diags diag.Diagnostics) {
	node, controller, ok := strings.Cut(id, "@")
	if !ok {
		node, controller = id, id
	}
	if !nodeRefPattern.MatchString(node) || !nodeRefPattern.MatchString(controller) {
		diags.Append(invalidImportID(id, "NODE@CONTROLLER, or CONTROLLER for slurmdbd where the controller's accounting points", "db01@login01", ""))
	}
	return node, controller, diags
}

// installDatabasePackages installs the accounting node's packages where missing; slurmdbd at
// the version of the Slurm packages the node has already, or else the controller's, such as
// its pinned slurm_version, so that installing it upgrades nothing else and slurmdbd is never
// older than slurmctld.
func (r *slurmAccountingResource) installDatabasePackages(ctx context.Context, h transport.Executor, node, controller string) diag.Diagnostics {
	var diags diag.Diagnostics
	fail := func(err error) diag.Diagnostics {
		return append(diags, nodeError("Cannot Install Slurmdbd", node, "Installing "+strings.Join(slurm.DatabasePackages, " ")+" with apt failed",
			"Check the node's apt sources (apt-get install "+strings.Join(slurm.DatabasePackages, " ")+" must work there), then apply again.", err))
	}
	version, err := slurm.InstalledFamilyVersion(ctx, h)
	if err != nil {
		return fail(err)
	}
	if version == "" && node != controller {
		ch, ok := r.cluster.connect(ctx, controller, &diags)
		if !ok {
			return diags
		}
		if version, err = slurm.InstalledFamilyVersion(ctx, ch); err != nil {
			return fail(err)
		}
	}
	if version == "" {
		if _, err := packages.Ensure(ctx, h, slurm.DatabasePackages...); err != nil {
			return fail(err)
		}
		return diags
	}
	if _, err := packages.Ensure(ctx, h, slurm.DatabaseServerPackage); err != nil {
		return fail(err)
	}
	if _, err := slurm.UpgradeNode(ctx, h, slurm.NodeUpgrade{Version: version, Packages: []string{"slurmdbd", slurm.ClientPackage}}); err != nil {
		return fail(err)
	}
	return diags
}
