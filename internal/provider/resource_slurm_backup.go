package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmBackupResource)(nil)
	_ resource.ResourceWithImportState = (*slurmBackupResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*slurmBackupResource)(nil)
)

// NewSlurmBackupResource returns the gpucluster_slurm_backup resource.
func NewSlurmBackupResource() guardedResource { return &slurmBackupResource{} }

type slurmBackupResource struct{ cluster *cluster }

type slurmBackupModel struct {
	ID                types.String `tfsdk:"id"`
	Controller        types.String `tfsdk:"controller"`
	Destination       types.String `tfsdk:"destination"`
	Retention         types.Int64  `tfsdk:"retention"`
	Trigger           types.String `tfsdk:"trigger"`
	IncludeAccounting types.Bool   `tfsdk:"include_accounting"`
	Latest            types.String `tfsdk:"latest"`
	Backups           types.List   `tfsdk:"backups"`
}

const (
	defaultBackupRetention = 7
	// backupControllerWait bounds the wait for slurmctld to answer once the backup started it again.
	backupControllerWait = 2 * time.Minute
)

func (r *slurmBackupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_backup"
}

func (r *slurmBackupResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Backups of the Slurm controller, taken on the controller whenever `trigger` changes: slurmctld's `StateSaveLocation` (its jobs, nodes and reservations) " +
			"and, with `include_accounting`, the accounting database, each backup a directory `" + "DESTINATION/slurm-backup-YYYYMMDDTHHMMSSZ` (UTC) holding `" + slurm.StateArchive + "` " +
			"and `DATABASE" + slurm.DumpSuffix + "`.\n\n" +
			"Slurm's upgrade guide copies `StateSaveLocation` with slurmctld stopped, since slurmctld rewrites its files all the time: the apply stops slurmctld for the copy " +
			"and the dump, starts it again and waits until it answers. Running jobs go on; for those seconds Slurm's commands get no answer and no job starts. The dump is " +
			"`mysqldump --single-transaction --databases DATABASE`, run as root over MariaDB's unix socket (no password is needed or written anywhere), while slurmdbd runs; " +
			"as slurmctld is stopped, the dump and the state match. A backup is written under a temporary name and renamed once whole (mode 0700, owner root), so a directory " +
			"under its final name is complete; a backup cut short leaves nothing under a final name, and its remains are removed by the next one. Then the backups beyond the " +
			"newest `retention` are removed; nothing else in `destination` is touched.\n\n" +
			"A change of `trigger` or `include_accounting` takes a new backup; a change of `retention` alone removes the backups beyond it. When the latest backup is gone from " +
			"the controller, the plan shows a new one. Destroy leaves every backup where it is. The restore procedure is in the guide \"Day-two operations\". " +
			"Import with `DESTINATION@CONTROLLER`, for example `/var/backups/slurm@login01`; the next plan takes a backup for `trigger`.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("`DESTINATION@CONTROLLER`, the import ID."),
			"controller": nodeAttribute("The Slurm controller, as `gpucluster_slurm_controller.NAME.id`, or `gpucluster_slurm_accounting.NAME.id` with `include_accounting`, " +
				"so that the accounting is set up first. Changing it replaces the resource."),
			"destination": schema.StringAttribute{
				MarkdownDescription: "The directory on the controller that holds the backups, such as `/var/backups/slurm`; created (mode 0700) when missing. An absolute path, outside " +
					"`StateSaveLocation`, and not a system directory such as `/var`. Put it on a disk other than `StateSaveLocation`'s, or copy it off the controller: a backup on the " +
					"disk it backs up is lost with that disk. Changing it replaces the resource (the backups at the old place stay).",
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{stringCheck{description: "destination must be a directory of its own on the controller", check: slurm.CheckDestination}},
			},
			"retention": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("How many backups to keep in `destination`, the newest ones. Defaults to %d.", defaultBackupRetention),
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(defaultBackupRetention),
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
			},
			"trigger": schema.StringAttribute{
				MarkdownDescription: "Any value whose change takes a new backup: a date, for a nightly apply, or the Slurm version before an upgrade. Up to 200 printable ASCII characters.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(slurm.TriggerPattern, "must be 1 to 200 printable ASCII characters")},
			},
			"include_accounting": schema.BoolAttribute{
				MarkdownDescription: "Dump the accounting database too, the one `" + slurm.SlurmdbdConfPath + "` on the controller names. Needs `gpucluster_slurm_accounting` on the controller. Defaults to false.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"latest": schema.StringAttribute{
				MarkdownDescription: "The path of the backup taken by the last apply. Null once it is gone from the controller, and the plan then takes a new one.",
				Computed:            true,
			},
			"backups": schema.ListAttribute{
				MarkdownDescription: "The backups in `destination`, oldest first, as paths.",
				Computed:            true,
				ElementType:         types.StringType,
			},
		},
	}
}

func (r *slurmBackupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func backupID(destination, controller string) types.String {
	return types.StringValue(destination + "@" + controller)
}

// ModifyPlan shows a new backup when the trigger changed or the latest backup is gone, and the
// list of backups changing when the retention alone did.
func (r *slurmBackupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	plan, state, creating, ok := planAndState[slurmBackupModel](ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	if !plan.Destination.IsUnknown() && !plan.Controller.IsUnknown() {
		plan.ID = backupID(plan.Destination.ValueString(), plan.Controller.ValueString())
	}
	switch {
	case creating || !plan.Trigger.Equal(state.Trigger) || !plan.IncludeAccounting.Equal(state.IncludeAccounting) || state.Latest.IsNull():
		plan.Latest, plan.Backups = types.StringUnknown(), types.ListUnknown(types.StringType)
		resp.Diagnostics.AddWarning("Slurm Backup Planned", fmt.Sprintf("The apply stops slurmctld on %s for the backup into %s and starts it again: running jobs go on, "+
			"and for those seconds Slurm's commands get no answer and no job starts.", plan.Controller.ValueString(), plan.Destination.ValueString()))
	case !plan.Retention.Equal(state.Retention):
		plan.Latest, plan.Backups = state.Latest, types.ListUnknown(types.StringType)
	default:
		plan.Latest, plan.Backups = state.Latest, state.Backups
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *slurmBackupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, ok := modelFrom[slurmBackupModel](ctx, req.Plan, &resp.Diagnostics)
	if ok {
		r.apply(ctx, plan, &resp.State, &resp.Diagnostics)
	}
}

func (r *slurmBackupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, ok := modelFrom[slurmBackupModel](ctx, req.Plan, &resp.Diagnostics)
	if ok {
		r.apply(ctx, plan, &resp.State, &resp.Diagnostics)
	}
}

// apply takes the backup the plan shows (latest unknown), or else only applies the retention.
func (r *slurmBackupResource) apply(ctx context.Context, plan slurmBackupModel, state stateSetter, diags *diag.Diagnostics) {
	controller, dest := plan.Controller.ValueString(), plan.Destination.ValueString()
	plan.ID = backupID(dest, controller)
	h, ok := r.cluster.connect(ctx, controller, diags)
	if !ok {
		return
	}
	var backups []string
	var err error
	if plan.Latest.IsUnknown() {
		b, found := r.backupOf(ctx, plan, diags)
		if !found {
			return
		}
		backups, err = slurm.TakeBackup(ctx, h, b, time.Now(), backupControllerWait)
	} else {
		backups, err = slurm.PruneBackups(ctx, h, dest, int(plan.Retention.ValueInt64()))
	}
	if err != nil {
		diags.Append(nodeError("Slurm Backup Failed", controller, "Backing up slurmctld's state into "+dest+" failed",
			"A backup cut short leaves nothing under a final name in "+dest+", and slurmctld is started again if it ran. Fix the cause (the disk's free space, mysqldump's message), then apply again.", err))
		return
	}
	plan.Backups = stringList(backups)
	if plan.Latest.IsUnknown() && len(backups) > 0 {
		plan.Latest = types.StringValue(backups[len(backups)-1])
	}
	diags.Append(state.Set(ctx, &plan)...)
}

// backupOf reads what the backup needs from the controller: StateSaveLocation from its
// fragment and, with include_accounting, the database slurmdbd.conf names.
func (r *slurmBackupResource) backupOf(ctx context.Context, plan slurmBackupModel, diags *diag.Diagnostics) (slurm.Backup, bool) {
	controller := plan.Controller.ValueString()
	st, d := r.cluster.readSlurmStatus(ctx, controller)
	diags.Append(d...)
	if diags.HasError() {
		return slurm.Backup{}, false
	}
	if st.Fragments.Controller == nil {
		diags.Append(nodeError("No Slurm Controller", controller, "The controller has no fragment "+slurm.FragmentDir+"/"+slurm.ControllerFile+", so there is no StateSaveLocation to back up",
			"Set controller = gpucluster_slurm_controller.NAME.id, so the controller is created first. Nothing was changed.", nil))
		return slurm.Backup{}, false
	}
	b := slurm.Backup{StateSaveLocation: st.Fragments.Controller.StateSaveLocation, Destination: plan.Destination.ValueString(), Retention: int(plan.Retention.ValueInt64())}
	if !plan.IncludeAccounting.ValueBool() {
		return b, true
	}
	h, ok := r.cluster.connect(ctx, controller, diags)
	if !ok {
		return slurm.Backup{}, false
	}
	conf, found, err := slurm.ReadSlurmdbdSettings(ctx, h)
	switch {
	case err != nil:
		diags.Append(nodeError("Cannot Read Slurmdbd", controller, "Reading "+slurm.SlurmdbdConfPath+" for the accounting database's name failed", "", err))
		return slurm.Backup{}, false
	case !found:
		diags.Append(nodeAttributeError(path.Root("include_accounting"), "No Accounting On The Controller", controller,
			"include_accounting is set, and the controller has no "+slurm.SlurmdbdConfPath+": slurmdbd and its database do not run there",
			"Set controller = gpucluster_slurm_accounting.NAME.id with accounting on the controller, or set include_accounting = false. Nothing was changed.", nil))
		return slurm.Backup{}, false
	}
	b.Database = conf["storageloc"]
	return b, true
}

// Read lists the backups on the controller; latest becomes null once it is gone from there.
func (r *slurmBackupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[slurmBackupModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	backups, ok := r.list(ctx, state, &resp.Diagnostics)
	if !ok {
		return
	}
	state.Backups = stringList(backups)
	if latest := state.Latest.ValueString(); !state.Latest.IsNull() && !slices.Contains(backups, latest) {
		state.Latest = types.StringNull()
		resp.Diagnostics.AddWarning("Drift Detected On "+state.Controller.ValueString(),
			fmt.Sprintf("The latest backup, %s, is gone from the controller.\n\nApply takes a new one.", latest))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *slurmBackupResource) list(ctx context.Context, m slurmBackupModel, diags *diag.Diagnostics) ([]string, bool) {
	controller := m.Controller.ValueString()
	h, ok := r.cluster.connect(ctx, controller, diags)
	if !ok {
		return nil, false
	}
	backups, err := slurm.ListBackups(ctx, h, m.Destination.ValueString())
	if err != nil {
		diags.Append(nodeError("Cannot List Slurm Backups", controller, "Listing the backups in "+m.Destination.ValueString()+" failed", "", err))
		return nil, false
	}
	return backups, true
}

// Delete leaves the backups on the controller: they are data, not configuration.
func (r *slurmBackupResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

// ImportState takes DESTINATION@CONTROLLER; latest is the newest backup there.
func (r *slurmBackupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	dest, controller, ok := parseBackupImportID(req.ID)
	if !ok {
		resp.Diagnostics.Append(invalidImportID(req.ID, "DESTINATION@CONTROLLER, the backups' directory on the controller and the controller", "/var/backups/slurm@login01", ""))
		return
	}
	m := slurmBackupModel{
		ID: backupID(dest, controller), Controller: types.StringValue(controller), Destination: types.StringValue(dest), Retention: types.Int64Value(defaultBackupRetention),
		Trigger: types.StringNull(), IncludeAccounting: types.BoolValue(false), Latest: types.StringNull(), Backups: stringList([]string{}),
	}
	backups, ok := r.list(ctx, m, &resp.Diagnostics)
	if !ok {
		return
	}
	m.Backups = stringList(backups)
	if len(backups) > 0 {
		m.Latest = types.StringValue(backups[len(backups)-1])
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// parseBackupImportID reads DESTINATION@CONTROLLER, the form of the resource's id.
func parseBackupImportID(id string) (destination, controller string, ok bool) {
	destination, controller, found := strings.Cut(id, "@")
	return destination, controller, found && slurm.CheckDestination(destination) == nil && nodeRefPattern.MatchString(controller)
}
