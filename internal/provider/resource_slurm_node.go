package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmNodeResource)(nil)
	_ resource.ResourceWithImportState = (*slurmNodeResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*slurmNodeResource)(nil)
)

// NewSlurmNodeResource returns the gpucluster_slurm_node resource.
func NewSlurmNodeResource() guardedResource { return &slurmNodeResource{} }

type slurmNodeResource struct{ cluster *cluster }

type slurmNodeModel struct {
	ID              types.String `tfsdk:"id"`
	Controller      types.String `tfsdk:"controller"`
	Name            types.String `tfsdk:"name"`
	CPUs            types.Int64  `tfsdk:"cpus"`
	Boards          types.Int64  `tfsdk:"boards"`
	SocketsPerBoard types.Int64  `tfsdk:"sockets_per_board"`
	CoresPerSocket  types.Int64  `tfsdk:"cores_per_socket"`
	ThreadsPerCore  types.Int64  `tfsdk:"threads_per_core"`
	RealMemory      types.Int64  `tfsdk:"real_memory"`
	Gres            types.String `tfsdk:"gres"`
	GPUFiles        types.String `tfsdk:"gpu_files"`
	State           types.String `tfsdk:"state"`
	DrainReason     types.String `tfsdk:"drain_reason"`
	Extra           types.Map    `tfsdk:"extra"`
	FactsSource     types.String `tfsdk:"facts_source"`
}

// hardwareAttr ties a hardware attribute to its NodeName key and its fact.
type hardwareAttr struct {
	attr, key string
	value     func(*slurmNodeModel) *types.Int64
	fact      func(nodes.Hardware) int64
}

var nodeHardware = []hardwareAttr{
	{"cpus", "CPUs", func(m *slurmNodeModel) *types.Int64 { return &m.CPUs }, func(h nodes.Hardware) int64 { return int64(h.CPUs) }},
	{"boards", "Boards", func(m *slurmNodeModel) *types.Int64 { return &m.Boards }, func(h nodes.Hardware) int64 { return int64(h.Boards) }},
	{"sockets_per_board", "SocketsPerBoard", func(m *slurmNodeModel) *types.Int64 { return &m.SocketsPerBoard }, func(h nodes.Hardware) int64 { return int64(h.SocketsPerBoard) }},
	{"cores_per_socket", "CoresPerSocket", func(m *slurmNodeModel) *types.Int64 { return &m.CoresPerSocket }, func(h nodes.Hardware) int64 { return int64(h.CoresPerSocket) }},
	{"threads_per_core", "ThreadsPerCore", func(m *slurmNodeModel) *types.Int64 { return &m.ThreadsPerCore }, func(h nodes.Hardware) int64 { return int64(h.ThreadsPerCore) }},
	{"real_memory", "RealMemory", func(m *slurmNodeModel) *types.Int64 { return &m.RealMemory }, func(h nodes.Hardware) int64 { return h.RealMemoryMiB }},
}

func (r *slurmNodeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_node"
}

func (r *slurmNodeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	lineClass := classDoc(slurm.NodeLineClass)
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "The node name, known once the node is defined on the controller. Refer to nodes as `gpucluster_slurm_node.NAME.id` from `gpucluster_slurm_partition` and `gpucluster_slurm_compute`, so that Terraform defines them first and the partition's plan-time check (pitfall P14) waits for them.",
			Computed:            true,
		},
		"controller": nodeAttribute("The controller node, as `gpucluster_slurm_controller.NAME.id`: where the node's fragment is kept. Changing it replaces the resource."),
		"name": schema.StringAttribute{
			MarkdownDescription: "The node's host name, its `NodeName`. The provider also reaches the node by this name (through the provider's node blocks) to read its hardware. Changing it replaces the resource.",
			Required:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators:          []validator.String{stringvalidator.RegexMatches(slurm.NamePattern, "must be a host name: letters, digits, '.', '_' and '-'")},
		},
		"gres": schema.StringAttribute{
			MarkdownDescription: "`Gres`, for example `gpu:4`. Defaults to `gpu:N` when `nvidia-smi -L` on the node lists N GPUs, otherwise to none. The lab's stand-in GPUs are not seen by nvidia-smi: set `gpu:4` there." + lineClass,
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{slurmValue},
		},
		"gpu_files": schema.StringAttribute{
			MarkdownDescription: "GPU device files for an explicit gres.conf line, `Name=gpu File=<gpu_files>` (for example `/dev/nvidia[0-3]`, as the lab's stand-in GPUs need). " +
				"Unset, the node's GPUs are found with `AutoDetect=nvml` as the guide does, which needs real NVIDIA GPUs and the NVML plugin (`gpucluster_slurm_compute` installs it where it finds them)." + classDoc(slurm.Reconfigure),
			Optional:   true,
			Validators: []validator.String{slurmValue},
		},
		"state": schema.StringAttribute{
			MarkdownDescription: "`State` of the node line: one of " + markdownList(slurm.NodeStates) + " (in any case), as slurm.conf(5) allows; `IDLE` and the busy states are the node's own report. Defaults to `" + slurm.DefaultNodeState + "`, as the guide writes it: the node's own report decides." + lineClass,
			Optional:            true,
			Computed:            true,
			Default:             stringdefault.StaticString(slurm.DefaultNodeState),
			Validators:          []validator.String{slurmSetting(slurm.NodeLine, "State", "state must be a node state")},
		},
		"drain_reason": schema.StringAttribute{
			MarkdownDescription: "Drains the node for maintenance, with this reason: `gpucluster_slurm_activation` runs `scontrol update nodename=NAME state=drain reason=...` " +
				"after it activates the files. No new job starts on the node; jobs running there run to their end (the node shows `draining`, then `drained`). " +
				"A runtime state, not a line of slurm.conf: no daemon restarts. Remove it to resume the node (`state=undrain`, which clears the drain alone) and clear its reason: slurmctld clears a reason on a resume only through an accounting storage plugin, and otherwise only when it allocates the node to a job, so without `gpucluster_slurm_accounting` the activation makes an allocation that runs nothing (`salloc --no-shell`, job name `gpucluster-clear-reason`) and cancels it at once. A node whose CPUs are all taken keeps showing the old reason until its next job starts. " +
				"Read back from `scontrol show node`, so a drain or resume made by hand, or a drain Slurm made itself (a node that reports less memory than declared), shows in the plan and apply puts back what the configuration says. " +
				"Letters, digits, spaces and `._,:;/()+!?%&*=@-`, up to 200 characters.",
			Optional:   true,
			Validators: []validator.String{stringvalidator.RegexMatches(slurm.DrainReasonPattern, "must be 1 to 200 letters, digits, spaces and ._,:;/()+!?%&*=@-, starting with a letter or digit and not ending in a space")},
		},
		"extra": schema.MapAttribute{
			MarkdownDescription: "Any other setting of the node line, by its Slurm name (`Features = \"a100\"`). Keys of the typed attributes are refused. " +
				"`MemSpecLimit` and `TmpDisk` take a whole number of megabytes without a unit; other values are refused at plan." + lineClass,
			Optional:    true,
			ElementType: types.StringType,
			Validators:  []validator.Map{slurmExtraValues{line: slurm.NodeLine}},
		},
		"facts_source": computedKeptAttribute("Where the hardware defaults came from: `" + nodes.SourceSlurmd + "` when slurmd is installed on the node, `" + nodes.SourceLscpu + "` (lscpu and /proc/meminfo) before that."),
	}
	for _, h := range nodeHardware {
		doc := fmt.Sprintf("`%s`. Defaults, when the node is first defined, to what `sudo slurmd -C` reports on the node, as the guide says; when slurmd is not installed there yet, to lscpu and /proc/meminfo (see `facts_source`). A default is kept afterwards.", h.key)
		if h.attr == "real_memory" {
			doc = "`RealMemory` in MB. Defaults, when the node is first defined, to what `sudo slurmd -C` reports (lscpu and /proc/meminfo before slurmd is installed). " +
				"A value above what the node reports is a plan error (pitfall P3): Slurm would drain the node. Rounding down is fine."
		}
		attrs[h.attr] = schema.Int64Attribute{
			MarkdownDescription: doc + lineClass,
			Optional:            true,
			Computed:            true,
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One compute node's definition, a `NodeName` line in the controller's slurm.conf. Nodes with identical hardware and settings share one line with a hostlist (`gpu[01-03]`), as the guide writes it.\n\n" +
			"Adding or removing a node changes the node set: " + classText(slurm.OrderedRestart) + " slurmd restarts only where it runs; a node not set up yet fetches the configuration when its slurmd first starts. " +
			activationDoc + "\n\n" +
			"Destroy drains the node first (reason `" + slurm.RemovalReason + "`, or the drain it has) and refuses while jobs still run there " +
			"after " + removalGrace.String() + "; `gpucluster_slurm_compute`, destroyed before it, is where to wait longer for them (`timeouts.delete`).\n\n" +
			"Do not give nodes `lifecycle { create_before_destroy = true }`: Terraform would then remove a node's fragment only after the activation, " +
			"which leaves the removal pending until the next apply.\n\n" +
			"Import with `NAME@CONTROLLER`, for example `gpu01@login01` (or the bare name, as the resource's `id` shows it, when the controller is the provider's `login_node`): one resource per node, also where slurm.conf defines several nodes in one hostlist line such as `NodeName=gpu[01-03]`. " +
			"On a controller set up by hand the node is read from that line, with the `NodeName=DEFAULT` attributes before it and its GPU files from gres.conf (see `gpucluster_slurm_controller`).",
		Attributes: attrs,
	}
}

func (r *slurmNodeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// def converts the model; known is false while some value is unknown.
func (m slurmNodeModel) def(ctx context.Context, diags *diag.Diagnostics) (slurm.NodeDef, bool) {
	if m.Name.IsUnknown() || m.Gres.IsUnknown() || m.GPUFiles.IsUnknown() || m.State.IsUnknown() || m.DrainReason.IsUnknown() || m.Extra.IsUnknown() {
		return slurm.NodeDef{}, false
	}
	n := slurm.NodeDef{Name: m.Name.ValueString(), Gres: m.Gres.ValueString(), GPUFiles: m.GPUFiles.ValueString(), State: m.State.ValueString(),
		DrainReason: m.DrainReason.ValueString(), Extra: mapValue(ctx, m.Extra, diags)}
	for _, v := range m.Extra.Elements() {
		if v.IsUnknown() {
			return n, false
		}
	}
	values := map[string]int64{}
	for _, h := range nodeHardware {
		v := *h.value(&m)
		if v.IsUnknown() {
			return n, false
		}
		values[h.attr] = v.ValueInt64()
	}
	n.CPUs, n.Boards = int(values["cpus"]), int(values["boards"])
	n.SocketsPerBoard, n.CoresPerSocket, n.ThreadsPerCore = int(values["sockets_per_board"]), int(values["cores_per_socket"]), int(values["threads_per_core"])
	n.RealMemory = values["real_memory"]
	return n, true
}

func (m *slurmNodeModel) setDef(n slurm.NodeDef) {
	m.ID, m.Name = types.StringValue(n.Name), types.StringValue(n.Name)
	m.CPUs, m.Boards = int64OrNull(int64(n.CPUs)), int64OrNull(int64(n.Boards))
	m.SocketsPerBoard, m.CoresPerSocket = int64OrNull(int64(n.SocketsPerBoard)), int64OrNull(int64(n.CoresPerSocket))
	m.ThreadsPerCore, m.RealMemory = int64OrNull(int64(n.ThreadsPerCore)), int64OrNull(n.RealMemory)
	m.Gres, m.GPUFiles, m.State = stringOrNull(n.Gres), stringOrNull(n.GPUFiles), types.StringValue(n.State)
	m.DrainReason = stringOrNull(n.DrainReason)
	m.Extra = extraValue(m.Extra, n.Extra)
}

const slurmNodeResourceName = "gpucluster_slurm_node"

var slurmNodeFragments = slurmFragmentKind[slurm.NodeDef]{
	resource: slurmNodeResourceName, attr: nodeAttr, fragment: slurm.NodeFragment, file: slurm.NodeFile,
	defs: func(f slurm.Fragments) []slurm.NodeDef { return f.Nodes }, name: func(n slurm.NodeDef) string { return n.Name },
}

// nodeAttr is the attribute that holds a slurm.FieldError's field.
func nodeAttr(field string) path.Path {
	switch field {
	case slurm.ExtraField:
		return path.Root("extra")
	case "NodeName":
		return path.Root("name")
	case "GPUFiles":
		return path.Root("gpu_files")
	case "Gres":
		return path.Root("gres")
	case "State":
		return path.Root("state")
	case "DrainReason":
		return path.Root("drain_reason")
	}
	for _, h := range nodeHardware {
		if h.key == field {
			return path.Root(h.attr)
		}
	}
	return path.Empty()
}

// ModifyPlan defaults the hardware from the node's facts, refuses a RealMemory above what
// the node reports (P3), and asks the controller what the change would do.
func (r *slurmNodeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		r.planRemoval(ctx, req, resp)
		return
	}
	plan, _ := modelFrom[slurmNodeModel](ctx, req.Plan, &resp.Diagnostics)
	config, _ := modelFrom[slurmNodeModel](ctx, req.Config, &resp.Diagnostics)
	creating := req.State.Raw.IsNull()
	state := priorModel[slurmNodeModel](ctx, req.State, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !creating {
		plan.ID, plan.FactsSource = state.ID, state.FactsSource
		// A default taken from the facts once is kept, so a node whose memory reading moves
		// by a few MB does not show a change at every plan.
		for _, h := range nodeHardware {
			if v := h.value(&plan); v.IsUnknown() && h.value(&config).IsNull() {
				*v = *h.value(&state)
			}
		}
		if plan.Gres.IsUnknown() && config.Gres.IsNull() {
			plan.Gres = state.Gres
		}
	}
	if r.cluster != nil && r.cluster.settingsKnown() && !plan.Name.IsUnknown() && (needsFacts(plan) || !config.RealMemory.IsNull()) {
		resp.Diagnostics.Append(r.planFacts(ctx, &plan, config)...)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Controller.IsUnknown() || (!creating && resp.Plan.Raw.Equal(req.State.Raw)) {
		return
	}
	n, known := plan.def(ctx, &resp.Diagnostics)
	slurmNodeFragments.planChange(ctx, r.cluster, &resp.Diagnostics, plan.Controller.ValueString(), n, known, path.Root("name"), "node "+n.Name)
}

func needsFacts(m slurmNodeModel) bool {
	for _, h := range nodeHardware {
		if h.value(&m).IsUnknown() {
			return true
		}
	}
	return m.Gres.IsUnknown()
}

// planFacts reads the node's hardware once: unknown hardware takes its values, and a
// RealMemory above the reported one is refused.
func (r *slurmNodeResource) planFacts(ctx context.Context, plan *slurmNodeModel, config slurmNodeModel) diag.Diagnostics {
	name := plan.Name.ValueString()
	_, facts, diags := r.cluster.gatherFacts(ctx, name, name)
	if diags.HasError() {
		var out diag.Diagnostics
		for _, d := range diags {
			out.Append(diag.NewAttributeErrorDiagnostic(path.Root("name"), d.Summary(), d.Detail()))
		}
		return out
	}
	for _, h := range nodeHardware {
		if v := h.value(plan); v.IsUnknown() {
			*v = types.Int64Value(h.fact(facts.Hardware))
		}
	}
	if plan.Gres.IsUnknown() {
		plan.Gres = types.StringNull()
		if facts.GPUCount > 0 {
			plan.Gres = types.StringValue(fmt.Sprintf("gpu:%d", facts.GPUCount))
		}
	}
	if plan.FactsSource.IsUnknown() {
		plan.FactsSource = types.StringValue(facts.FactsSource)
	}
	if !config.RealMemory.IsNull() && !config.RealMemory.IsUnknown() {
		if err := slurm.CheckRealMemory(slurm.NodeDef{Name: name, RealMemory: config.RealMemory.ValueInt64()}, facts.RealMemoryMiB); err != nil {
			diags.AddAttributeError(path.Root("real_memory"), "RealMemory Above What The Node Reports",
				fmt.Sprintf("%v\n\n(The node's figure comes from %s.) Set real_memory to %d or less, or leave it unset to take the node's figure.", err, facts.FactsSource, facts.RealMemoryMiB))
		}
	}
	return diags
}

// planRemoval tells the activation's plan that the node's fragment goes.
func (r *slurmNodeResource) planRemoval(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if state, ok := modelFrom[slurmNodeModel](ctx, req.State, &resp.Diagnostics); ok {
		slurmNodeFragments.planRemoval(r.cluster, state.Controller.ValueString(), state.Name.ValueString())
	}
}

func (r *slurmNodeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.write)
}

func (r *slurmNodeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.write)
}

// write puts the node's fragment on the controller; hardware the plan could not default
// (the provider's connection settings were unknown) is read from the node now.
func (r *slurmNodeResource) write(ctx context.Context, m *slurmNodeModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if needsFacts(*m) || m.FactsSource.IsUnknown() {
		diags.Append(r.planFacts(ctx, m, slurmNodeModel{RealMemory: types.Int64Null()})...)
		if diags.HasError() {
			return diags
		}
	}
	n, known := m.def(ctx, &diags)
	if diags.HasError() {
		return diags
	}
	m.ID = m.Name
	return append(diags, slurmNodeFragments.write(ctx, r.cluster, m.Controller.ValueString(), n, known)...)
}

func (r *slurmNodeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[slurmNodeModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	n, st, found := slurmNodeFragments.read(ctx, r.cluster, &resp.Diagnostics, state.Controller.ValueString(), state.Name.ValueString())
	if found {
		state.setDef(n)
		// The drain is what slurmctld says, so one made or lifted by hand is drift; while
		// slurmctld does not answer, or does not know the node yet, the declared one stands.
		if rt, ok := st.Runtime[n.Name]; ok {
			state.DrainReason = stringOrNull(rt.DeclaredDrain())
		}
	}
	storeRead(ctx, resp, &state, found)
}

// Delete drains the node and, once no job runs there, removes its fragment; the activation
// then restarts the remaining nodes.
func (r *slurmNodeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[slurmNodeModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	controller, name := state.Controller.ValueString(), state.Name.ValueString()
	resp.Diagnostics.Append(r.cluster.drainForRemoval(ctx, controller, name, removalGrace)...)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(slurmNodeFragments.remove(ctx, r.cluster, controller, name)...)
	}
}

// ImportState takes NAME@CONTROLLER, or a bare NAME on the login node; Read then reads the definition from the node's fragment,
// or from slurm.conf on a controller set up by hand.
func (r *slurmNodeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importState(ctx, r.cluster, req, resp, "gpu01@login01", func(controller types.String, name string) slurmNodeModel {
		m := slurmNodeModel{Controller: controller, Name: types.StringValue(name), FactsSource: types.StringNull()}
		m.setDef(slurm.NodeDef{Name: name})
		return m
	})
}
