package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
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
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmPartitionResource)(nil)
	_ resource.ResourceWithImportState = (*slurmPartitionResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*slurmPartitionResource)(nil)
)

// NewSlurmPartitionResource returns the gpucluster_slurm_partition resource.
func NewSlurmPartitionResource() guardedResource { return &slurmPartitionResource{} }

type slurmPartitionResource struct{ cluster *cluster }

type slurmPartitionModel struct {
	ID           types.String `tfsdk:"id"`
	Controller   types.String `tfsdk:"controller"`
	Name         types.String `tfsdk:"name"`
	Nodes        types.Set    `tfsdk:"nodes"`
	Default      types.Bool   `tfsdk:"default"`
	MaxTime      types.String `tfsdk:"max_time"`
	State        types.String `tfsdk:"state"`
	AllowGroups  types.Set    `tfsdk:"allow_groups"`
	DefMemPerGPU types.Int64  `tfsdk:"def_mem_per_gpu"`
	Extra        types.Map    `tfsdk:"extra"`
}

// defaultPartitionState is the guide's State=UP.
const defaultPartitionState = "UP"

func (r *slurmPartitionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_partition"
}

func (r *slurmPartitionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	class := classDoc(slurm.PartitionLineClass)
	resp.Schema = schema.Schema{
		MarkdownDescription: "A partition, a `PartitionName` line in the controller's slurm.conf. Any change of it is a " + classText(slurm.PartitionLineClass) + " " + activationDoc + " The guide's: `nodes` = all GPU servers, `default = true`, `max_time = \"3-00:00:00\"`, " +
			"`allow_groups = [\"users\"]` and `def_mem_per_gpu = 120000`.\n\n" +
			"Every node it lists needs a `gpucluster_slurm_node` (pitfall P14): a name no node fragment on the controller defines is a plan error. Refer to the nodes as " +
			"`gpucluster_slurm_node.NAME.id`: those are unknown until the nodes exist, so nodes created in the same apply are checked at apply instead, where slurm.conf " +
			"is never written with an undefined node. A literal name is checked against the controller's node fragments at plan time.\n\n" +
			"With `AllowGroups` the partition is hidden from other accounts, admin included: use `sinfo -a` or `sudo scontrol show partition`.\n\n" +
			"Destroy removes the partition's fragment, and the activation removes its line with a reconfigure; jobs already in it keep running. " +
			"Import with `NAME@CONTROLLER`, for example `gpu@login01` (or the bare name, as the resource's `id` shows it, when the controller is the provider's `login_node`); on a controller set up by hand the partition is read from its `PartitionName` line (see `gpucluster_slurm_controller`).",
		Attributes: map[string]schema.Attribute{
			"id":         computedKeptAttribute("The partition name."),
			"controller": nodeAttribute("The controller node, as `gpucluster_slurm_controller.NAME.id`: where the partition's fragment is kept. Changing it replaces the resource."),
			"name": schema.StringAttribute{
				MarkdownDescription: "`PartitionName`. Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.RegexMatches(slurm.NamePattern, "must be letters, digits, '.', '_' and '-'")},
			},
			"nodes": schema.SetAttribute{
				MarkdownDescription: "Names of the nodes in the partition, written as one hostlist (`gpu[01-03]`). Each must be defined by a `gpucluster_slurm_node` (P14)." + class,
				Required:            true,
				ElementType:         types.StringType,
				Validators: []validator.Set{setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(stringvalidator.RegexMatches(slurm.NamePattern, "must be a node name"))},
			},
			"default": schema.BoolAttribute{
				MarkdownDescription: "`Default=YES`: jobs that name no partition go here. Defaults to `false`." + class,
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"max_time": schema.StringAttribute{
				MarkdownDescription: "`MaxTime`: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes or days-hours:minutes:seconds, " +
					"for example `3-00:00:00` (three days), or `UNLIMITED`. Any other value is refused at plan, since slurmctld would refuse it. Unset, Slurm's default (unlimited) applies." + class,
				Optional:   true,
				Validators: []validator.String{slurmValue, slurmSetting(slurm.PartitionLine, "MaxTime", "max_time must be a time Slurm reads")},
			},
			"state": schema.StringAttribute{
				MarkdownDescription: "`State`: one of " + markdownList(slurm.PartitionStates) + " (in any case). Defaults to `" + defaultPartitionState + "`." + class,
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(defaultPartitionState),
				Validators:          []validator.String{slurmSetting(slurm.PartitionLine, "State", "state must be a partition state")},
			},
			"allow_groups": schema.SetAttribute{
				MarkdownDescription: "`AllowGroups`: only members of these groups may use the partition (the guide: `users`, which keeps admin out of the job path). Unset, everyone may." + class,
				Optional:            true,
				ElementType:         types.StringType,
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(stringvalidator.RegexMatches(userNamePattern, "must be a group name"))},
			},
			"def_mem_per_gpu": schema.Int64Attribute{
				MarkdownDescription: "`DefMemPerGPU` in MB: the memory a job gets per GPU when it omits `--mem` (the guide: 120000). On a GPU partition with memory scheduled (`CR_*_Memory`) " +
					"and no default, the first job takes the whole node's memory and blocks the other GPUs: the plan warns (pitfall P4). A value above a GPU node's " +
					"`RealMemory` is refused at plan, since no one-GPU job without `--mem` could start there; one that fits fewer such jobs than the node has GPUs is a warning." + class,
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			},
			"extra": schema.MapAttribute{
				MarkdownDescription: "Any other setting of the partition line, by its Slurm name (`DefaultTime = \"1:00:00\"`). Keys of the typed attributes are refused. " +
					"Values Slurm would refuse are refused at plan: `DefaultTime` takes a time as `max_time` does, and " + markdownList(slurm.MemoryKeys) +
					" a whole number of megabytes without a unit (`122880`, not `120G`), or `UNLIMITED`." + class,
				Optional:    true,
				ElementType: types.StringType,
				Validators:  []validator.Map{slurmExtraValues{line: slurm.PartitionLine}},
			},
		},
	}
}

func (r *slurmPartitionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// def converts the model; known is false while some value is unknown.
func (m slurmPartitionModel) def(ctx context.Context, diags *diag.Diagnostics) (slurm.PartitionDef, bool) {
	if m.Name.IsUnknown() || !fullyKnown(m.Nodes) || m.Default.IsUnknown() || m.MaxTime.IsUnknown() || m.State.IsUnknown() ||
		!fullyKnown(m.AllowGroups) || m.DefMemPerGPU.IsUnknown() || m.Extra.IsUnknown() {
		return slurm.PartitionDef{}, false
	}
	for _, v := range m.Extra.Elements() {
		if v.IsUnknown() {
			return slurm.PartitionDef{}, false
		}
	}
	return slurm.PartitionDef{
		Name: m.Name.ValueString(), Nodes: setStrings(ctx, m.Nodes, diags), Default: m.Default.ValueBool(),
		MaxTime: m.MaxTime.ValueString(), State: m.State.ValueString(), AllowGroups: setStrings(ctx, m.AllowGroups, diags),
		DefMemPerGPU: m.DefMemPerGPU.ValueInt64(), Extra: mapValue(ctx, m.Extra, diags),
	}, true
}

func (m *slurmPartitionModel) setDef(p slurm.PartitionDef) {
	m.ID, m.Name = types.StringValue(p.Name), types.StringValue(p.Name)
	m.Nodes = stringSet(p.Nodes)
	m.Default, m.MaxTime, m.State = types.BoolValue(p.Default), stringOrNull(p.MaxTime), types.StringValue(p.State)
	m.AllowGroups, m.DefMemPerGPU, m.Extra = stringSetOrNull(p.AllowGroups), int64OrNull(p.DefMemPerGPU), extraValue(m.Extra, p.Extra)
}

const slurmPartitionResourceName = "gpucluster_slurm_partition"

var slurmPartitionFragments = slurmFragmentKind[slurm.PartitionDef]{
	resource: slurmPartitionResourceName, attr: partitionAttr, fragment: slurm.PartitionFragment, file: slurm.PartitionFile,
	defs: func(f slurm.Fragments) []slurm.PartitionDef { return f.Partitions }, name: func(p slurm.PartitionDef) string { return p.Name },
}

// partitionAttr is the attribute that holds a slurm.FieldError's field.
func partitionAttr(field string) path.Path {
	attrs := map[string]string{
		slurm.ExtraField: "extra", "PartitionName": "name", "Nodes": "nodes", "Default": "default", "MaxTime": "max_time",
		"State": "state", "AllowGroups": "allow_groups", "DefMemPerGPU": "def_mem_per_gpu",
	}
	if a, ok := attrs[field]; ok {
		return path.Root(a)
	}
	return path.Empty()
}

// ModifyPlan asks the controller what the partition would do: an undefined node (P14) is an
// error, a GPU partition without a memory default (P4) a warning.
func (r *slurmPartitionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if state, ok := modelFrom[slurmPartitionModel](ctx, req.State, &resp.Diagnostics); ok {
			slurmPartitionFragments.planRemoval(r.cluster, state.Controller.ValueString(), state.Name.ValueString())
		}
		return
	}
	plan, ok := modelFrom[slurmPartitionModel](ctx, req.Plan, &resp.Diagnostics)
	if !ok || plan.Controller.IsUnknown() || (!req.State.Raw.IsNull() && req.Plan.Raw.Equal(req.State.Raw)) {
		return
	}
	if plan.ID.IsUnknown() && !plan.Name.IsUnknown() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), plan.Name)...)
	}
	p, known := plan.def(ctx, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		slurmPartitionFragments.planChange(ctx, r.cluster, &resp.Diagnostics, plan.Controller.ValueString(), p, known, path.Root("nodes"), "partition "+p.Name)
	}
}

func (r *slurmPartitionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.write)
}

func (r *slurmPartitionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.write)
}

func (r *slurmPartitionResource) write(ctx context.Context, m *slurmPartitionModel) diag.Diagnostics {
	var diags diag.Diagnostics
	p, known := m.def(ctx, &diags)
	if diags.HasError() {
		return diags
	}
	m.ID = m.Name
	return append(diags, slurmPartitionFragments.write(ctx, r.cluster, m.Controller.ValueString(), p, known)...)
}

func (r *slurmPartitionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[slurmPartitionModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	p, _, found := slurmPartitionFragments.read(ctx, r.cluster, &resp.Diagnostics, state.Controller.ValueString(), state.Name.ValueString())
	if found {
		state.setDef(p)
	}
	storeRead(ctx, resp, &state, found)
}

// Delete removes the partition's fragment; the activation reconfigures.
func (r *slurmPartitionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if state, ok := modelFrom[slurmPartitionModel](ctx, req.State, &resp.Diagnostics); ok {
		resp.Diagnostics.Append(slurmPartitionFragments.remove(ctx, r.cluster, state.Controller.ValueString(), state.Name.ValueString())...)
	}
}

// ImportState takes NAME@CONTROLLER, or a bare NAME on the login node; Read then reads the definition from the partition's
// fragment, or from slurm.conf on a controller set up by hand.
func (r *slurmPartitionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importState(ctx, r.cluster, req, resp, "gpu@login01", func(controller types.String, name string) slurmPartitionModel {
		m := slurmPartitionModel{Controller: controller}
		m.setDef(slurm.PartitionDef{Name: name, Nodes: []string{}})
		return m
	})
}
