package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmComputeResource)(nil)
	_ resource.ResourceWithImportState = (*slurmComputeResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*slurmComputeResource)(nil)
)

// NewSlurmComputeResource returns the gpucluster_slurm_compute resource.
func NewSlurmComputeResource() guardedResource { return &slurmComputeResource{} }

type slurmComputeResource struct{ cluster *cluster }

type slurmComputeModel struct {
	ID             types.String   `tfsdk:"id"`
	Node           types.String   `tfsdk:"node"`
	Controller     types.String   `tfsdk:"controller"`
	ConfServerPort types.Int64    `tfsdk:"conf_server_port"`
	NVMLPlugin     types.Bool     `tfsdk:"nvml_plugin"`
	Version        types.String   `tfsdk:"version"`
	SlurmVersion   types.String   `tfsdk:"slurm_version"`
	Installed      types.String   `tfsdk:"installed_version"`
	Status         types.String   `tfsdk:"status"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (r *slurmComputeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_compute"
}

func (r *slurmComputeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	waitDoc := fmt.Sprintf("How long the apply waits for the controller to see the node registered and usable, as a duration (`\"5m\"`). Defaults to `%s`.", slurm.NodeWaitTimeout)
	resp.Schema = schema.Schema{
		MarkdownDescription: "A configless compute node, as the guide sets it up: installs `" + slurm.SlurmdPackage + "` with apt where missing, plus `" + slurm.NVMLPluginPackage +
			"` where the node has real NVIDIA GPUs (the driver's `" + slurm.NVIDIADriverMarker + "` exists; pitfall P11), writes the node's whole Slurm configuration, one line in `" +
			slurm.SlurmdDefaultsPath + "`: `SLURMD_OPTIONS=\"--conf-server <controller>:<port>\"`, and keeps no slurm.conf on the node (one found there is removed). " +
			"slurmd is enabled and started (restarted only when that file changed while it ran: a package installed after the file was written starts it with it), and the apply waits, polling the controller, until the node is " +
			"registered and usable (idle, mixed, allocated or completing; asked with `scontrol show node`, so a node that is in no partition yet registers too).\n\n" +
			"Create it after the node's `gpucluster_slurm_node` (refer to it as `node = gpucluster_slurm_node.NAME.id`), after `gpucluster_slurm_activation`, which defines the node on the controller, " +
			"and after `gpucluster_munge_key` (pitfall P10: slurmd " +
			"authenticates with MUNGE; the apply refuses to start slurmd where `munge -n | unmunge` fails). `" + slurm.ClientPackage + "` is installed too: a batch job runs `srun` on its first node to start its steps.\n\n" +
			"Destroy first drains the node on the controller (reason `" + slurm.RemovalReason + "`, or the drain it has), so no new job starts there, and waits for the jobs running there " +
			"for up to `timeouts.delete`: while jobs still run, destroy fails and changes nothing else. Then it stops and disables slurmd and removes the health check program `" +
			slurm.HealthCheckPath + "` (see `gpucluster_slurm_controller`'s `health_check_program`), which only slurmd runs; the packages and `" + slurm.SlurmdDefaultsPath + "` stay. Import with the node's name.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("The node name."),
			"node": schema.StringAttribute{
				MarkdownDescription: "The compute node: its Slurm `NodeName`, which is also how the provider reaches it (through the provider's node blocks). Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.RegexMatches(slurm.NamePattern, "must be a host name: letters, digits, '.', '_' and '-'")},
			},
			"controller": schema.StringAttribute{
				MarkdownDescription: "The controller's host name, which slurmd fetches its configuration from (`--conf-server`); the provider also asks the controller there whether the node registered. " +
					"Use `gpucluster_slurm_controller.NAME.slurmctld_host`. Changing it rewrites `" + slurm.SlurmdDefaultsPath + "` and restarts slurmd.",
				Required:   true,
				Validators: []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a host name")},
			},
			"conf_server_port": schema.Int64Attribute{
				MarkdownDescription: "The controller's port, `slurmctld_port` of the controller. Defaults to `6817`. Changing it rewrites `" + slurm.SlurmdDefaultsPath + "` and restarts slurmd.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(int64(slurm.DefaultControllerSettings("").SlurmctldPort)),
				Validators:          portValidators(),
			},
			"nvml_plugin": schema.BoolAttribute{
				MarkdownDescription: "Whether the node has real NVIDIA GPUs, so `" + slurm.NVMLPluginPackage + "` is installed there. Stand-in device files (the lab's) do not count.",
				Computed:            true,
				PlanModifiers:       []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"version":           computedKeptAttribute("Version of the installed slurmd (`slurmd -V`)."),
			"slurm_version":     slurmVersionAttribute("`" + slurm.SlurmdPackage + "`, `" + slurm.ClientPackage + "` and the plugins they need"),
			"installed_version": installedVersionAttribute(slurm.SlurmdPackage),
			"status": schema.StringAttribute{
				MarkdownDescription: "`" + inSync + "`, or what the last refresh found different on the node: `" + slurm.SlurmdDefaultsPath + "` missing or different, a local slurm.conf, " +
					"slurmd not running, not enabled or not installed. A plan that changes it back to `" + inSync + "` repairs the node.",
				Computed: true,
			},
		},
		Blocks: map[string]schema.Block{"timeouts": timeoutsBlockWith(ctx, "How long the apply waits for the node to register, and destroy for its jobs to end.", waitDoc,
			fmt.Sprintf("How long destroy waits for the jobs running on the node to end, as a duration (`\"2h\"`). Defaults to `%s`, time for jobs that are ending: "+
				"destroy drains the node and, while jobs still run there after the wait, refuses and leaves it drained with slurmd running, so no job is cut off.", removalGrace))},
	}
}

func (r *slurmComputeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan marks the node in sync, so drift shows in the plan as a change back to it, and
// shows and checks a change of slurm_version.
func (r *slurmComputeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(inSync))...)
	var plan, state slurmComputeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	planSlurmVersion(ctx, resp, plan.Node.ValueString(), plan.SlurmVersion, state.Installed, "slurmd")
}

func (r *slurmComputeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.convergeWithin(createTimeout))
}

func (r *slurmComputeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.convergeWithin(updateTimeout))
}

// convergeWithin is converge with the wait of the operation's timeout (createTimeout or
// updateTimeout), each with the node-wait default.
func (r *slurmComputeResource) convergeWithin(timeout timeoutReader) func(context.Context, *slurmComputeModel) diag.Diagnostics {
	return func(ctx context.Context, m *slurmComputeModel) diag.Diagnostics {
		wait, diags := timeout(m.Timeouts, ctx, slurm.NodeWaitTimeout)
		if diags.HasError() {
			return diags
		}
		return r.converge(ctx, m, wait)
	}
}

// converge writes the defaults file only if it differs, installs slurmd, removes a local
// slurm.conf, starts slurmd (restarting it when its options changed) and waits until the
// controller sees the node ready, for at most wait.
func (r *slurmComputeResource) converge(ctx context.Context, m *slurmComputeModel, wait time.Duration) diag.Diagnostics {
	var diags diag.Diagnostics
	node, controller := m.Node.ValueString(), m.Controller.ValueString()
	content, err := slurm.SlurmdDefaults(controller, int(m.ConfServerPort.ValueInt64()))
	if err != nil {
		diags.Append(invalidConfServer(err))
		return diags
	}
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return diags
	}
	if err := slurm.CheckMunge(ctx, h); err != nil {
		diags.Append(mungeError(node, "slurmd", err))
		return diags
	}
	st, err := slurm.ReadCompute(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read Compute Node", node, "Reading slurmd's state failed", "", err))
		return diags
	}
	m.NVMLPlugin = types.BoolValue(st.RealGPUs)
	// The options go first: Debian's package starts slurmd on install, and without them it
	// retries a DNS SRV lookup until systemd's start timeout, 90 s later.
	changed, err := slurm.WriteSlurmdDefaults(ctx, h, content)
	if err != nil {
		diags.Append(nodeError("Cannot Write Slurmd Options", node, "Writing "+slurm.SlurmdDefaultsPath+" failed", "", err))
		return diags
	}
	installed, more := r.installPackages(ctx, h, m, st)
	if diags.Append(more...); diags.HasError() {
		return diags
	}
	if st.LocalSlurmConf && !st.Controller {
		if err := slurm.RemoveLocalSlurmConf(ctx, h); err != nil {
			diags.Append(nodeError("Cannot Remove Local slurm.conf", node, "Removing "+slurm.ConfDir+"/slurm.conf failed", "", err))
			return diags
		}
	}
	// A slurmd the package started just now read the new options already: no second start.
	restart := changed && st.Active && !slices.Contains(installed, slurm.SlurmdPackage)
	if err := slurm.StartSlurmd(ctx, h, restart); err != nil {
		diags.Append(nodeError("Slurmd Does Not Start", node, "Starting slurmd failed",
			"Check that MUNGE runs there with the cluster's key and that the controller answers on "+fmt.Sprintf("%s:%d", controller, m.ConfServerPort.ValueInt64())+".", err))
		return diags
	}
	diags.Append(r.waitReady(ctx, node, controller, wait)...)
	if diags.HasError() {
		return diags
	}
	diags.Append(daemonApplied(ctx, h, "slurmd", m.Node, &m.ID, &m.Version, &m.Status)...)
	if diags.HasError() {
		return diags
	}
	m.Installed, more = installedVersion(ctx, h, node, slurm.SlurmdPackage)
	return append(diags, more...)
}

// installPackages installs the node's packages where missing, or, with slurm_version, at that
// version, upgrading slurmd only once the controller's slurmctld is at that version or newer,
// as Slurm's order wants. It returns the packages it installed or upgraded.
func (r *slurmComputeResource) installPackages(ctx context.Context, h transport.Executor, m *slurmComputeModel, st slurm.ComputeState) ([]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	node := m.Node.ValueString()
	if m.SlurmVersion.IsNull() {
		installed, err := packages.Ensure(ctx, h, st.Packages()...)
		if err != nil {
			diags.Append(nodeError("Cannot Install Slurmd", node, "Installing "+strings.Join(st.Packages(), " ")+" with apt failed",
				"Check the node's apt sources, then apply again.", err))
		}
		return installed, diags
	}
	version, controller := m.SlurmVersion.ValueString(), m.Controller.ValueString()
	ch, ok := r.cluster.connect(ctx, controller, &diags)
	if !ok {
		return nil, diags
	}
	if err := slurm.CheckControllerFirst(ctx, ch, version); err != nil {
		if !errors.Is(err, slurm.ErrControllerBehind) {
			diags.Append(nodeError("Cannot Read Installed Version", controller, "Asking dpkg for the version of slurmctld failed", "", err))
			return nil, diags
		}
		diags.Append(nodeAttributeError(slurmVersionPath, "Slurmctld Not Upgraded Yet", node,
			"slurm_version asks for slurmd "+version+", newer than slurmctld on the controller "+controller+": Slurm upgrades slurmd only after slurmctld; nothing was changed on the node",
			"Set the controller's slurm_version to "+version+" too, and make this resource depend on gpucluster_slurm_activation, which depends on the controller, so the controller is upgraded first in the same apply.", err))
		return nil, diags
	}
	res, more := upgradeSlurm(ctx, h, node, slurm.NodeUpgrade{Version: version, Packages: st.Packages()})
	return res.Installed, append(diags, more...)
}

// invalidConfServer refuses a controller or port that cannot go into --conf-server.
func invalidConfServer(err error) diag.Diagnostic {
	return settingError(path.Root("controller"), "Invalid Conf Server", "The controller and conf_server_port cannot form slurmd's --conf-server HOST:PORT",
		"Use the controller's host name (gpucluster_slurm_controller.NAME.slurmctld_host) and a port from 1 to 65535.", err)
}

// waitReady polls the controller until it sees the node usable.
func (r *slurmComputeResource) waitReady(ctx context.Context, node, controller string, wait time.Duration) diag.Diagnostics {
	var diags diag.Diagnostics
	ch, ok := r.cluster.connect(ctx, controller, &diags)
	if !ok {
		return diags
	}
	if state, err := slurm.WaitNodeReady(ctx, ch, node, wait); err != nil {
		diags.Append(nodeError("Compute Node Not Ready", node,
			fmt.Sprintf("slurmd runs, but the controller %s does not see the node ready (last state %q)", controller, state),
			"A node needs a gpucluster_slurm_node definition, activated by gpucluster_slurm_activation, first: make this resource depend on the activation. A drained node usually declares more than it has (RealMemory, CPUs: sudo scontrol show node "+node+
				" shows the reason); a down node cannot reach the controller or MUNGE: journalctl -u slurmd there.", err))
	}
	return diags
}

func (r *slurmComputeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[slurmComputeModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	st, diags := r.readCompute(ctx, node)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if st.Version == nil && st.Defaults == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	want, err := slurm.SlurmdDefaults(state.Controller.ValueString(), int(state.ConfServerPort.ValueInt64()))
	if err != nil {
		resp.Diagnostics.Append(invalidConfServer(err))
		return
	}
	status := describeDrift(st.Problems(want))
	warnDrift(&resp.Diagnostics, "configless compute node", map[string]string{node: status})
	state.Status = types.StringValue(status)
	state.NVMLPlugin = types.BoolValue(st.RealGPUs)
	state.Version = types.StringNull()
	if st.Version != nil {
		state.Version = types.StringValue(st.Version.Original())
	}
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	state.Installed, diags = installedVersion(ctx, h, node, slurm.SlurmdPackage)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *slurmComputeResource) readCompute(ctx context.Context, node string) (slurm.ComputeState, diag.Diagnostics) {
	var diags diag.Diagnostics
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return slurm.ComputeState{}, diags
	}
	st, err := slurm.ReadCompute(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read Compute Node", node, "Reading slurmd's state failed", "", err))
	}
	return st, diags
}

// Delete stops and disables slurmd and removes the health check program. The packages and the defaults file stay: the node is
// out of the cluster's scheduling until a compute resource covers it again.
func (r *slurmComputeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[slurmComputeModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	wait, diags := deleteTimeout(state.Timeouts, ctx, removalGrace)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.cluster.drainForRemoval(ctx, state.Controller.ValueString(), node, wait)...)
	if resp.Diagnostics.HasError() {
		return
	}
	h, ok := r.cluster.connect(ctx, node, &resp.Diagnostics)
	if !ok {
		return
	}
	if err := slurm.StopSlurmd(ctx, h); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Stop Slurmd", node, "Stopping and disabling slurmd failed", "", err))
	}
}

// ImportState takes the node name; controller and port are read from its defaults file.
func (r *slurmComputeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !slurm.NamePattern.MatchString(req.ID) {
		resp.Diagnostics.Append(invalidImportID(req.ID, "NODE, the compute node's name", "gpu01", ""))
		return
	}
	st, diags := r.readCompute(ctx, req.ID)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	controller, port, err := slurm.ParseSlurmdDefaults(st.Defaults)
	if err != nil {
		resp.Diagnostics.AddError("No Configless Compute Node To Import",
			fmt.Sprintf("%s is not set up as a configless compute node: %v. Create the resource instead.", req.ID, err))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &slurmComputeModel{
		ID: types.StringValue(req.ID), Node: types.StringValue(req.ID), Controller: types.StringValue(controller),
		ConfServerPort: types.Int64Value(int64(port)), NVMLPlugin: types.BoolValue(st.RealGPUs), Version: types.StringNull(), Status: types.StringValue(inSync),
		Timeouts: nullTimeoutsWithDelete(),
	})...)
}
