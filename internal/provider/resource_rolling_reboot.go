package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure   = (*rollingRebootResource)(nil)
	_ resource.ResourceWithImportState = (*rollingRebootResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*rollingRebootResource)(nil)
)

// NewRollingRebootResource returns the gpucluster_rolling_reboot resource.
func NewRollingRebootResource() guardedResource { return &rollingRebootResource{} }

type rollingRebootResource struct{ cluster *cluster }

type rollingRebootModel struct {
	ID             types.String `tfsdk:"id"`
	Controller     types.String `tfsdk:"controller"`
	Nodes          types.List   `tfsdk:"nodes"`
	Trigger        types.String `tfsdk:"trigger"`
	MaxUnavailable types.Int64  `tfsdk:"max_unavailable"`
	DrainTimeout   types.String `tfsdk:"drain_timeout"`
	BootTimeout    types.String `tfsdk:"boot_timeout"`
	Done           types.Map    `tfsdk:"done"`
	PlanOrder      types.List   `tfsdk:"plan_order"`
}

const (
	defaultDrainTimeout = time.Hour
	defaultBootTimeout  = 10 * time.Minute
)

func (r *rollingRebootResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_rolling_reboot"
}

func (r *rollingRebootResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reboots GPU servers one after another (or a few at a time, `max_unavailable`), for a driver update or hardware work, whenever `trigger` changes. " +
			"For each server the apply drains it in Slurm (reason `" + slurm.RollingReason + "`), waits for its jobs to end (`drain_timeout`, then it refuses; it never ends a job), " +
			"runs `systemctl reboot` there, waits for it to answer over SSH with a new boot id and for slurmd to register with the same hardware (`slurmd -C`, the GPUs `nvidia-smi -L` lists), " +
			"resumes it, and only then goes on to the next. A server that was drained before keeps its drain.\n\n" +
			"The plan shows the order (`plan_order`). Each server done is recorded on the controller (`" + slurm.RebootRecordDir + "/NODE`, the trigger it was rebooted for), " +
			"so a run that stopped, for any reason, goes on at the next apply with the servers not done yet; a server already rebooted for the trigger is skipped, also after the resource is created again. " +
			"A server that does not come back, or comes back with other hardware, stops the run: it stays drained, and the servers after it are not touched.\n\n" +
			"Each server belongs to one rolling reboot (recorded on the controller, see the ownership guide): a second resource that lists it, in this configuration or another state, is refused at plan, so two runs never drain the same server.\n\n" +
			"Destroy changes nothing on the hosts. Import with `NODE,NODE@CONTROLLER`, for example `gpu01,gpu02@login01`; the next plan shows a run for every server whose record is not for `trigger`.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("`NODE,NODE@CONTROLLER`, the import ID."),
			"controller": nodeAttribute("The Slurm controller, as `gpucluster_slurm_controller.NAME.slurmctld_host`: where the servers are drained and resumed and where the records are kept. " +
				"Changing it replaces the resource."),
			"nodes": schema.ListAttribute{
				MarkdownDescription: "The GPU servers to reboot, by their Slurm node names (also the names the provider reaches them by), in the order of the run. Not the controller.",
				Required:            true,
				ElementType:         types.StringType,
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(stringvalidator.RegexMatches(slurm.NamePattern, "must be a node name: letters, digits, '.', '_' and '-'")),
				},
			},
			"trigger": schema.StringAttribute{
				MarkdownDescription: "Any value whose change calls for a reboot, such as the driver version. Every server whose last rolling reboot was for another value is rebooted. Up to 200 printable ASCII characters.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(slurm.TriggerPattern, "must be 1 to 200 printable ASCII characters")},
			},
			"max_unavailable": schema.Int64Attribute{
				MarkdownDescription: "How many servers may be out of service at once. Defaults to 1.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(1),
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
			},
			"drain_timeout": schema.StringAttribute{
				MarkdownDescription: "How long to wait for the jobs on a drained server to end, as a duration (`90m`). Past it the apply refuses and ends no job: the server stays drained, so no new job starts there, and the next apply waits again. Defaults to `" + shortDuration(defaultDrainTimeout) + "`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(shortDuration(defaultDrainTimeout)),
				Validators:          []validator.String{durationValidator{}},
			},
			"boot_timeout": schema.StringAttribute{
				MarkdownDescription: "How long to wait for a rebooted server to answer over SSH, and again for its slurmd to register, as a duration. Defaults to `" + shortDuration(defaultBootTimeout) + "`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(shortDuration(defaultBootTimeout)),
				Validators:          []validator.String{durationValidator{}},
			},
			"done": schema.MapAttribute{
				MarkdownDescription: "For each server of `nodes` with a record on the controller, the trigger of its last rolling reboot. The plan shows every server at `trigger`, what the apply brings.",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"plan_order": schema.ListAttribute{
				MarkdownDescription: "The servers the apply reboots, in order: those of `nodes` not yet rebooted for `trigger`. Once none is left, the order of the last run.",
				Computed:            true,
				ElementType:         types.StringType,
			},
		},
	}
}

func (r *rollingRebootResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (m rollingRebootModel) nodeList(ctx context.Context, diags *diag.Diagnostics) ([]string, bool) {
	if m.Nodes.IsUnknown() || m.Nodes.IsNull() {
		return nil, false
	}
	var out []string
	diags.Append(m.Nodes.ElementsAs(ctx, &out, false)...)
	for _, v := range m.Nodes.Elements() {
		if v.IsUnknown() {
			return nil, false
		}
	}
	return out, !diags.HasError()
}

func rollingID(nodes []string, controller string) types.String {
	return types.StringValue(strings.Join(nodes, ",") + "@" + controller)
}

// ModifyPlan shows the run: every server at trigger in done, and the order of those not there yet.
func (r *rollingRebootResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	plan, state, creating, ok := planAndState[rollingRebootModel](ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	nodes, known := plan.nodeList(ctx, &resp.Diagnostics)
	if !known || plan.Trigger.IsUnknown() || plan.Controller.IsUnknown() {
		return
	}
	controller := plan.Controller.ValueString()
	for _, n := range nodes {
		if r.cluster != nil && r.cluster.sameNode(n, controller) {
			resp.Diagnostics.AddAttributeError(path.Root("nodes"), "Controller Among The Servers To Reboot",
				fmt.Sprintf("nodes lists %s, the controller: the run drains and resumes the servers through slurmctld, which must stay up. Reboot the controller apart, and remove it from nodes.", n))
			return
		}
	}
	plan.ID = rollingID(nodes, controller)
	goal := map[string]string{}
	for _, n := range nodes {
		goal[n] = plan.Trigger.ValueString()
	}
	plan.Done = stringMap(goal)
	records, recordsKnown := mapValue(ctx, state.Done, &resp.Diagnostics), !creating
	if creating && r.cluster != nil && r.cluster.settingsKnown() {
		records, recordsKnown = r.readRecords(ctx, controller, nodes, &resp.Diagnostics)
	}
	pending := slurm.Pending(nodes, records, plan.Trigger.ValueString())
	switch {
	case resp.Diagnostics.HasError():
		return
	case !recordsKnown:
		plan.PlanOrder = types.ListUnknown(types.StringType)
	case len(pending) > 0:
		plan.PlanOrder = stringList(pending)
		resp.Diagnostics.AddWarning("Rolling Reboot Planned", rollingPlanText(pending, plan))
	case creating:
		plan.PlanOrder = stringList([]string{})
	default:
		plan.PlanOrder = state.PlanOrder
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// rollingPlanText says what the apply will do, wave by wave.
func rollingPlanText(pending []string, m rollingRebootModel) string {
	var waves []string
	for _, w := range slurm.Waves(pending, int(m.MaxUnavailable.ValueInt64())) {
		waves = append(waves, strings.Join(w, " and "))
	}
	return fmt.Sprintf("The apply reboots %s, in this order (at most %d out of service at once), for trigger %q: "+
		"each is drained, its jobs are awaited for up to %s, and it is resumed once it is back with the same hardware.",
		strings.Join(waves, ", then "), m.MaxUnavailable.ValueInt64(), m.Trigger.ValueString(), m.DrainTimeout.ValueString())
}

func stringMap(m map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

// readRecords reads the controller's records of nodes; known is false when the controller
// could not be read, an error in diags.
func (r *rollingRebootResource) readRecords(ctx context.Context, controller string, nodes []string, diags *diag.Diagnostics) (map[string]string, bool) {
	h, ok := r.cluster.connect(ctx, controller, diags)
	if !ok {
		return nil, false
	}
	records, err := slurm.ReadRebootRecords(ctx, h, nodes)
	if err != nil {
		diags.Append(nodeError("Cannot Read Rolling Reboot Records", controller, "Reading "+slurm.RebootRecordDir+" failed", "", err))
		return nil, false
	}
	return records, true
}

func (r *rollingRebootResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rollingRebootModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !resp.Diagnostics.HasError() {
		r.run(ctx, plan, &resp.State, &resp.Diagnostics)
	}
}

func (r *rollingRebootResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan rollingRebootModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !resp.Diagnostics.HasError() {
		r.run(ctx, plan, &resp.State, &resp.Diagnostics)
	}
}

// run reboots the servers not done yet and stores what the controller's records say after it,
// also when the run stopped, so the state shows how far it came.
func (r *rollingRebootResource) run(ctx context.Context, plan rollingRebootModel, state stateSetter, diags *diag.Diagnostics) {
	nodes, _ := plan.nodeList(ctx, diags)
	controller := plan.Controller.ValueString()
	if diags.HasError() {
		return
	}
	plan.ID = rollingID(nodes, controller)
	h, ok := r.cluster.connect(ctx, controller, diags)
	if !ok {
		return
	}
	records, err := slurm.ReadRebootRecords(ctx, h, nodes)
	if err != nil {
		diags.Append(nodeError("Cannot Read Rolling Reboot Records", controller, "Reading "+slurm.RebootRecordDir+" failed", "", err))
		return
	}
	pending := slurm.Pending(nodes, records, plan.Trigger.ValueString())
	if plan.PlanOrder.IsUnknown() {
		plan.PlanOrder = stringList(pending)
	}
	rolling := slurm.Rolling{
		Controller: h,
		Connect: func(ctx context.Context, node string) (transport.Executor, error) {
			h, err := r.cluster.host(ctx, node)
			if err != nil {
				return nil, err
			}
			return h, nil
		},
		Forget:         r.cluster.forget,
		Trigger:        plan.Trigger.ValueString(),
		MaxUnavailable: int(plan.MaxUnavailable.ValueInt64()),
		DrainTimeout:   durationOr(plan.DrainTimeout, defaultDrainTimeout),
		BootTimeout:    durationOr(plan.BootTimeout, defaultBootTimeout),
	}
	if err := rolling.Reboot(ctx, pending); err != nil {
		diags.Append(rollingError(controller, plan, err))
		// The records say how far the run came, also when Terraform's context ended it; unread,
		// those from before the run stand, and the next plan reads them again.
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if after, err := slurm.ReadRebootRecords(readCtx, h, nodes); err == nil {
			records = after
		}
	} else {
		records = map[string]string{}
		for _, n := range nodes {
			records[n] = plan.Trigger.ValueString()
		}
	}
	plan.Done = stringMap(records)
	diags.Append(state.Set(ctx, &plan)...)
}

// stateSetter is the response state of Create and Update.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// rollingError explains the server the run stopped on.
func rollingError(controller string, m rollingRebootModel, err error) diag.Diagnostic {
	var ne *slurm.NodeRebootError
	if !errors.As(err, &ne) {
		return nodeError("Rolling Reboot Failed", controller, "The rolling reboot could not start", "", err)
	}
	left := fmt.Sprintf("The run stopped at %s; the servers after it were not touched.", ne.Node)
	if ne.Drained {
		left += fmt.Sprintf(" %s stays drained, so no new job starts there; to return it to service without the run, scontrol update nodename=%s state=resume on the controller.", ne.Node, ne.Node)
	}
	again := " Run apply again to go on from " + ne.Node + "."
	var jobs *slurm.JobsRunningError
	switch {
	case errors.As(err, &jobs):
		return nodeError("Jobs Still Running", ne.Node,
			fmt.Sprintf("Jobs %s still ran when drain_timeout (%s) ended; no job was ended", strings.Join(jobs.Jobs, ", "), m.DrainTimeout.ValueString()),
			left+" Run apply again once they end, or raise drain_timeout.", err)
	case ne.Step == "boot":
		return nodeError("Server Did Not Come Back", ne.Node, fmt.Sprintf("It was rebooted and did not answer over SSH with a new boot id within boot_timeout (%s)", m.BootTimeout.ValueString()),
			left+" Look at its console or BMC."+again, err)
	case ne.Step == "hardware":
		return nodeError("Server Came Back With Other Hardware", ne.Node, "After its reboot it reports other hardware than before",
			left+" Check the hardware (a GPU missing, memory lost) and the driver."+again, err)
	case ne.Step == "register":
		return nodeError("Slurmd Did Not Register", ne.Node, fmt.Sprintf("It came back, and its slurmd did not register with slurmctld within boot_timeout (%s)", m.BootTimeout.ValueString()),
			left+" Look at systemctl status slurmd and journalctl -u slurmd there."+again, err)
	default:
		return nodeError("Rolling Reboot Failed", ne.Node, "The rolling reboot's "+ne.Step+" step failed", left+again, err)
	}
}

func (r *rollingRebootResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[rollingRebootModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	nodes, known := state.nodeList(ctx, &resp.Diagnostics)
	if !known {
		return
	}
	records, ok := r.readRecords(ctx, state.Controller.ValueString(), nodes, &resp.Diagnostics)
	if !ok {
		return
	}
	state.Done = stringMap(records)
	if state.PlanOrder.IsNull() {
		state.PlanOrder = stringList([]string{})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete leaves the hosts as they are: the servers are back, and the records stay true.
func (r *rollingRebootResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

// ImportState takes NODE,NODE@CONTROLLER.
func (r *rollingRebootResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	nodes, controller, ok := parseRollingImportID(req.ID)
	if !ok {
		resp.Diagnostics.Append(invalidImportID(req.ID, "NODE,NODE@CONTROLLER, the servers in the run's order and the controller", "gpu01,gpu02@login01", ""))
		return
	}
	m := rollingRebootModel{
		ID: rollingID(nodes, controller), Controller: types.StringValue(controller), Nodes: stringList(nodes), Trigger: types.StringNull(),
		MaxUnavailable: types.Int64Value(1), DrainTimeout: types.StringValue(shortDuration(defaultDrainTimeout)),
		BootTimeout: types.StringValue(shortDuration(defaultBootTimeout)), Done: types.MapNull(types.StringType), PlanOrder: stringList([]string{}),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// parseRollingImportID reads NODE,NODE@CONTROLLER, the form of the resource's id.
func parseRollingImportID(id string) (nodes []string, controller string, ok bool) {
	list, controller, found := strings.Cut(id, "@")
	nodes = strings.Split(list, ",")
	return nodes, controller, found && nodeRefPattern.MatchString(controller) && slurm.CheckRollingNodes(nodes) == nil
}

// forget drops the pool's connection to node, so the next use dials it afresh.
func (c *cluster) forget(node string) {
	if cfg, err := c.connConfig(node, 0); err == nil {
		c.pool.Forget(cfg)
	}
}
