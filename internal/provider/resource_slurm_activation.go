package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmActivationResource)(nil)
	_ resource.ResourceWithImportState = (*slurmActivationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*slurmActivationResource)(nil)
)

// NewSlurmActivationResource returns the gpucluster_slurm_activation resource.
func NewSlurmActivationResource() guardedResource { return &slurmActivationResource{} }

type slurmActivationResource struct{ cluster *cluster }

type slurmActivationModel struct {
	ID           types.String   `tfsdk:"id"`
	Controller   types.String   `tfsdk:"controller"`
	ChangeClass  types.String   `tfsdk:"change_class"`
	Reasons      types.List     `tfsdk:"reasons"`
	ConfigSHA256 types.String   `tfsdk:"config_sha256"`
	Status       types.String   `tfsdk:"status"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

// defaultActivationWait bounds each wait of an activation: for slurmctld to answer after its
// restart or reconfigure (it loads its state first, which takes seconds, not minutes), and for
// the nodes whose slurmd restarted to be ready again, which is the same wait as a new node's.
const defaultActivationWait = slurm.NodeWaitTimeout

func (r *slurmActivationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_activation"
}

func (r *slurmActivationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	waitDoc := fmt.Sprintf("How long the activation waits, each time, for slurmctld to answer `scontrol ping` after its start, restart or reconfigure, "+
		"and for the nodes whose slurmd restarted to be ready again, as a duration (`\"5m\"`). Defaults to `%s`. "+
		"A slurmctld that does not answer in time is rolled back to the previous files.", defaultActivationWait)
	resp.Schema = schema.Schema{
		MarkdownDescription: "Activates the Slurm configuration once per apply. `gpucluster_slurm_controller`, `gpucluster_slurm_node` and `gpucluster_slurm_partition` " +
			"only write their fragments in `" + slurm.FragmentDir + "` on the controller; this resource assembles `slurm.conf`, `cgroup.conf` and `gres.conf` from all of them " +
			"under the controller's lock, checks them (Slurm's own parser, pitfalls P2 and P14, the installed version) and brings the daemons onto them the way the class of " +
			"change needs, once for every change of the apply: " + classText(slurm.Reconfigure) + " " + classText(slurm.RestartController) + " " +
			classText(slurm.OrderedRestart) + " If slurmctld does not come back, the previous files are restored, slurmctld started with them again, and the error quotes its log; " +
			"the fragments stay, so the activation stays pending. slurmctld is started at most twice per apply (the second time only to roll back), after `systemctl reset-failed`, " +
			"so systemd's start limit never stops it, and slurmd at most once per node. Then it drains and resumes nodes as their `drain_reason` declares, with " +
			"`scontrol update` and no restart.\n\n" +
			"Make it depend on every `gpucluster_slurm_node` and `gpucluster_slurm_partition` (`depends_on`), and make `gpucluster_slurm_compute` depend on it, so that the nodes " +
			"are defined before their slurmd registers. Fragments written without an activation (an interrupted apply, `-target` of a node alone, a change the activation did " +
			"not wait for) are a pending activation: the next plan shows it in `status`, and apply does it. The plan warns before a restart of slurmctld or an ordered restart, " +
			"naming the settings and the nodes.\n\n" +
			"Destroy changes nothing on the hosts. Import with the controller node, for example `login01`.",
		Attributes: map[string]schema.Attribute{
			"id":         computedKeptAttribute("The controller node."),
			"controller": nodeAttribute("The controller node, as `gpucluster_slurm_controller.NAME.id`. Changing it replaces the resource."),
			"change_class": schema.StringAttribute{
				MarkdownDescription: "What the last activation asked of the daemons: `none`, `reconfigure`, `restart of slurmctld` or `ordered restart`. " +
					"Known after apply; the plan's warning says it beforehand.",
				Computed: true,
			},
			"reasons": schema.ListAttribute{
				MarkdownDescription: "What decided the last activation's class: the settings, nodes and partitions that changed, slurmctld not running, slurmd restarts still due; the drains and resumes it made (`drain gpu02 (GPU driver update)`, `resume gpu02`), and where it wrote or removed the health check program (`wrote " + slurm.HealthCheckPath + " on gpu02`).",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"config_sha256": schema.StringAttribute{
				MarkdownDescription: "SHA-256 of `slurm.conf`, `cgroup.conf` and `gres.conf` as slurmctld runs them. It changes exactly when an activation changes them.",
				Computed:            true,
			},
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or the activation the last refresh found pending on the controller, with its class and reasons: fragments written but not " +
					"activated, a file in `" + slurm.ConfDir + "` edited by hand, slurmctld not running, slurmd restarts still due after an ordered restart, a node drained or resumed " +
					"other than its `drain_reason` says, the health check program missing or different on a node. A plan that changes " +
					"it back to `" + inSync + "` activates.",
				Computed: true,
			},
		},
		Blocks: map[string]schema.Block{"timeouts": timeoutsBlock(ctx, "How long the activation waits for the daemons.", waitDoc)},
	}
}

func (r *slurmActivationResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan plans an activation when one is pending on the controller or the resources it
// depends on change a fragment in this plan, and warns before a restart. The outcome stays
// unknown in the plan: it is decided on the controller when the activation runs.
func (r *slurmActivationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, state slurmActivationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() || plan.Controller.IsUnknown() {
		return
	}
	controller := plan.Controller.ValueString()
	var changes []slurm.Fragment
	var unknown int
	if r.cluster != nil {
		changes, unknown = r.cluster.slurmPlans.planned(controller)
	}
	pending := !creating && state.Status.ValueString() != inSync
	if !creating && !pending && len(changes) == 0 && unknown == 0 && req.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	plan.ID = types.StringValue(controller)
	plan.ChangeClass, plan.ConfigSHA256 = types.StringUnknown(), types.StringUnknown()
	plan.Reasons = types.ListUnknown(types.StringType)
	plan.Status = types.StringValue(inSync)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	r.warnPlanned(ctx, controller, changes, unknown, &resp.Diagnostics)
}

// activationReasons are an outcome's reasons, its drains and resumes included.
func activationReasons(out slurm.Outcome) []string {
	reasons := slices.Clone(out.Reasons)
	for _, c := range out.NodeStates {
		reasons = append(reasons, c.String())
	}
	return reasons
}

// warnPlanned says in the plan what the activation will do, where it disrupts.
func (r *slurmActivationResource) warnPlanned(ctx context.Context, controller string, changes []slurm.Fragment, unknown int, diags *diag.Diagnostics) {
	if r.cluster == nil || !r.cluster.settingsKnown() {
		return
	}
	h, ok := r.cluster.connect(ctx, controller, diags)
	if !ok {
		return
	}
	// A refusal is left to the resource whose change it is, in its own plan, on its own attribute;
	// but P2 can come from two resources, a TRES list kept while the accounting goes, so only
	// all the changes together show it.
	out, err := slurm.Preview(ctx, h, changes...)
	switch {
	case err == nil:
		diags.Append(activationWarnings(controller, out, unknown)...)
	case slurm.IsAccountingRequired(err) && unknown == 0:
		diags.Append(previewDiags(path.Root("controller"), controller, "all the Slurm changes of this plan", out, err)...)
	}
}

// activationWarnings are the plan's warnings about an activation: a restart of slurmctld
// while it runs, an ordered restart, slurmd restarts. Changes still unknown can only add to
// what the known ones need, which the warning says.
func activationWarnings(controller string, out slurm.Outcome, unknown int) diag.Diagnostics {
	var diags diag.Diagnostics
	reasons := strings.Join(out.Reasons, ", ")
	if unknown > 0 {
		reasons += fmt.Sprintf(", and %d change(s) known only at apply, which can only raise the class", unknown)
	}
	running := out.CurrentSHA256 != "" && !slices.Contains(out.Reasons, slurm.NotRunningReason)
	switch {
	case out.Class == slurm.OrderedRestart && running:
		restarts := "slurmd on every compute node that runs it"
		if len(out.RestartNodes) > 0 {
			restarts = "slurmd on " + slurm.CompressHostlist(out.RestartNodes) + " (where it runs)"
		}
		diags.AddWarning("Ordered Restart Of Slurm",
			fmt.Sprintf("Activating the Slurm configuration on %s is an ordered restart (%s): slurmctld stops, the files are written, slurmctld starts, then %s restarts, once for all changes of this apply. %s",
				controller, reasons, restarts, slurm.OrderedRestart.Description()))
	case out.Class == slurm.RestartController && running:
		diags.AddWarning("Slurmctld Will Restart",
			fmt.Sprintf("Activating the Slurm configuration on %s restarts slurmctld once (%s). %s", controller, reasons, slurm.RestartController.Description()))
	case len(out.RestartNodes) > 0:
		diags.AddWarning("Slurmd Will Restart",
			fmt.Sprintf("Activating the Slurm configuration on %s restarts slurmd on %s (where it runs): %s. Running jobs survive the restart.",
				controller, slurm.CompressHostlist(out.RestartNodes), reasons))
	}
	if len(out.Adopted) > 0 {
		effect := "The settings Slurm runs with stay the same: no daemon is restarted or reconfigured for the new layout."
		if out.Class != slurm.NoChange {
			effect = "Only the changes of this plan reach the daemons: " + out.Class.String() + " (" + reasons + ")."
		}
		diags.AddWarning("Hand-Written Slurm Files Will Be Rewritten",
			fmt.Sprintf("%s/slurm.conf, cgroup.conf and gres.conf on %s were written by hand, not by this provider. This apply writes the fragments %s in %s, read from them, "+
				"and then assembles the three files from the fragments in the provider's layout.%s %s", slurm.ConfDir, controller, strings.Join(out.Adopted, ", "), slurm.FragmentDir, plugstackNote(out), effect))
	}
	var drains []string
	for _, c := range out.NodeStates {
		if c.Drain {
			drains = append(drains, c.String())
		}
	}
	if len(drains) > 0 {
		diags.AddWarning("Nodes Will Be Drained",
			fmt.Sprintf("The activation on %s sets, with scontrol update and no restart: %s. No new job starts on a drained node; jobs running there run to their end. "+
				"Remove drain_reason to resume the node.", controller, strings.Join(drains, ", ")))
	}
	return diags
}

// plugstackNote says that adoption replaces Debian's plugstack.conf along with the files.
func plugstackNote(out slurm.Outcome) string {
	if !out.ReplacesDebianPlugstack {
		return ""
	}
	return " Debian's " + slurm.PlugstackPath + ", whose include fails at every start of slurmctld and loads no plugin, is replaced by one that lists none."
}

func (r *slurmActivationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, &resp.State, &resp.Diagnostics, createTimeout)
}

func (r *slurmActivationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !r.apply(ctx, req.Plan, &resp.State, &resp.Diagnostics, updateTimeout) {
		// The prior state stands; the next refresh reads what is still pending.
		resp.State.Raw = req.State.Raw
	}
}

// apply activates what plan describes, each wait bounded by the timeout that limit reads
// (create's or update's), and stores what was done in state. It reports whether it succeeded.
func (r *slurmActivationResource) apply(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics,
	limit timeoutReader) bool {
	var m slurmActivationModel
	diags.Append(plan.Get(ctx, &m)...)
	if diags.HasError() {
		return false
	}
	wait, limitDiags := limit(m.Timeouts, ctx, defaultActivationWait)
	diags.Append(limitDiags...)
	if diags.HasError() {
		return false
	}
	diags.Append(r.activate(ctx, &m, wait)...)
	if diags.HasError() {
		return false
	}
	diags.Append(state.Set(ctx, &m)...)
	return !diags.HasError()
}

// activate runs the one activation of the apply on the controller, then restarts slurmd where
// an ordered restart asks for it and waits until the controller sees those nodes ready.
func (r *slurmActivationResource) activate(ctx context.Context, m *slurmActivationModel, wait time.Duration) diag.Diagnostics {
	controller := m.Controller.ValueString()
	h, diags := r.cluster.slurmController(ctx, controller)
	if diags.HasError() {
		return diags
	}
	out, activateDiags := r.cluster.activateWithHealthCheck(ctx, controller, h, wait)
	diags.Append(activateDiags...)
	if diags.HasError() {
		return diags
	}
	for _, w := range out.Warnings {
		diags.Append(pitfallWarning(controller, w))
	}
	diags.Append(r.cluster.restartSlurmd(ctx, h, out.RestartNodes, wait)...)
	states, err := slurm.SetNodeStates(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Drain Or Resume Node", controller, "Setting the nodes' drain_reason with scontrol update after the activation failed",
			"Check sudo scontrol show node on the controller, then apply again: the drain or resume stays pending, and the next plan shows it.", err))
		return diags
	}
	out.NodeStates = states
	m.ID = m.Controller
	m.ChangeClass = types.StringValue(out.Class.String())
	m.Reasons = stringList(activationReasons(out))
	m.ConfigSHA256 = types.StringValue(out.NextSHA256)
	m.Status = types.StringValue(inSync)
	return diags
}

func (r *slurmActivationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if state, ok := readState(ctx, req, resp, r.read); ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	}
}

// read fills config_sha256 and status from the controller; found is false when the controller
// has no controller fragment, so there is nothing to activate there.
func (r *slurmActivationResource) read(ctx context.Context, m *slurmActivationModel) (found bool, diags diag.Diagnostics) {
	controller := m.Controller.ValueString()
	h, diags := r.cluster.slurmController(ctx, controller)
	if diags.HasError() {
		return false, diags
	}
	st, err := slurm.ReadStatus(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read Slurm Configuration", controller,
			"Reading the fragments in "+slurm.FragmentDir+" and the files in "+slurm.ConfDir+" failed",
			"A fragment edited by hand that no longer parses must be fixed or removed by hand.", err))
		return false, diags
	}
	if st.Fragments.Controller == nil {
		return false, diags
	}
	out, err := slurm.Preview(ctx, h)
	if isCutShort(err) {
		diags.Append(nodeError("Cannot Preview Slurm Configuration", controller, "Assembling slurm.conf from the fragments to compare it with the running one failed", "", err))
		return false, diags
	}
	m.ConfigSHA256 = types.StringValue(out.CurrentSHA256)
	status := inSync
	switch {
	case err != nil:
		status = "activation pending, and refused as the fragments are: " + err.Error()
	case out.Class != slurm.NoChange || len(out.RestartNodes) > 0 || len(out.NodeStates) > 0:
		status = fmt.Sprintf("activation pending (%s): %s", out.Class, strings.Join(activationReasons(out), ", "))
	}
	drift, driftDiags := r.cluster.healthCheckDrift(ctx, st)
	diags.Append(driftDiags...)
	if diags.HasError() {
		return false, diags
	}
	status = withHealthCheckDrift(status, out.Class, drift)
	if status != inSync {
		diags.AddWarning("Slurm Activation Pending On "+controller,
			fmt.Sprintf("The files slurmctld runs with, or the daemons, are not what the fragments in %s say: %s.\n\nApply activates them.", slurm.FragmentDir, status))
	}
	m.Status = types.StringValue(status)
	if m.ChangeClass.IsNull() {
		m.ChangeClass = types.StringValue(slurm.NoChange.String())
	}
	if m.Reasons.IsNull() {
		m.Reasons = stringList(nil)
	}
	return true, diags
}

// withHealthCheckDrift adds to status what differs in the health check program on the nodes,
// which the activation writes back.
func withHealthCheckDrift(status string, class slurm.ChangeClass, drift []string) string {
	switch {
	case len(drift) == 0:
		return status
	case status == inSync:
		return fmt.Sprintf("activation pending (%s): %s", class, strings.Join(drift, ", "))
	}
	return status + ", " + strings.Join(drift, ", ")
}

// Delete changes nothing: the configuration stays active, and the resources that own the
// fragments remove them.
func (r *slurmActivationResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

// ImportState takes the controller node.
func (r *slurmActivationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !nodeRefPattern.MatchString(req.ID) {
		resp.Diagnostics.Append(invalidImportID(req.ID, "CONTROLLER, the controller node as in the resource's controller attribute", "login01", ""))
		return
	}
	m := slurmActivationModel{
		ID: types.StringValue(req.ID), Controller: types.StringValue(req.ID), ChangeClass: types.StringNull(), Reasons: types.ListNull(types.StringType),
		Timeouts: nullTimeouts(),
	}
	found, diags := r.read(ctx, &m)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("No Slurm Controller To Import",
			fmt.Sprintf("%s has no controller fragment %s/%s: nothing is activated there by this provider. Create gpucluster_slurm_controller and this resource instead.",
				req.ID, slurm.FragmentDir, slurm.ControllerFile))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
