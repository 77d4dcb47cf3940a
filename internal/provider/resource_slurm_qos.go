package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmQOSResource)(nil)
	_ resource.ResourceWithImportState = (*slurmQOSResource)(nil)
)

// NewSlurmQOSResource returns the gpucluster_slurm_qos resource.
func NewSlurmQOSResource() guardedResource {
	return &slurmQOSResource{sacctmgrResource[slurm.QOS, slurmQOSModel, *slurmQOSModel]{object: qosObject, importExample: "gpu1@login01"}}
}

type slurmQOSResource struct {
	sacctmgrResource[slurm.QOS, slurmQOSModel, *slurmQOSModel]
}

type slurmQOSModel struct {
	ID             types.String `tfsdk:"id"`
	Controller     types.String `tfsdk:"controller"`
	Name           types.String `tfsdk:"name"`
	Description    types.String `tfsdk:"description"`
	Priority       types.Int64  `tfsdk:"priority"`
	MaxTRESPerUser types.Map    `tfsdk:"max_tres_per_user"`
	MaxJobsPerUser types.Int64  `tfsdk:"max_jobs_per_user"`
}

func (r *slurmQOSResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_qos"
}

func (r *slurmQOSResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Slurm QOS (quality of service): a priority and per-user limits, for example at most one GPU per user at a time " +
			"(`max_tres_per_user = { \"gres/gpu\" = 1 }`). A job beyond the limit pends with the reason `QOSMaxGRESPerUser`. Limits apply only with " +
			"`enforce` including `limits` or `qos` on `gpucluster_slurm_accounting`, and to users whose association allows the QOS (`gpucluster_slurm_user`'s `qos`). " +
			"A limit on `gres/gpu` needs slurmdbd to know that TRES, which slurmctld registers when it first runs with `tres = [\"gres/gpu\"]`: set " +
			"`controller = gpucluster_slurm_activation.NAME.id` so the activation comes first. " + associationsDoc + " Import with `NAME@CONTROLLER`, for example `gpu1@login01` (or the bare name, as the resource's `id` shows it, when the controller is the provider's `login_node`).",
		Attributes: map[string]schema.Attribute{
			"id":         computedKeptAttribute("The QOS name."),
			"controller": nodeAttribute("The controller, as `gpucluster_slurm_activation.NAME.id` (or `gpucluster_slurm_accounting.NAME.id` when no limit names a gres). Changing it replaces the resource."),
			"name": schema.StringAttribute{
				MarkdownDescription: "The QOS name. Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{assocName, stringvalidator.NoneOf("normal")},
			},
			"description": schema.StringAttribute{
				MarkdownDescription: "`Description`, in lower case, as Slurm stores it. Unset, left as it is.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Validators:          []validator.String{descriptionValidator},
			},
			"priority": schema.Int64Attribute{
				MarkdownDescription: "`Priority`, added to the priority of the jobs that use the QOS (with the multifactor priority plugin). Defaults to 0.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(0),
				Validators:          []validator.Int64{int64validator.Between(0, 1<<31-1)},
			},
			"max_tres_per_user": schema.MapAttribute{
				MarkdownDescription: "`MaxTRESPerUser`: the most of each TRES one user's running jobs may hold at once, by TRES name, for example `{ \"gres/gpu\" = 1 }`.",
				Optional:            true,
				ElementType:         types.Int64Type,
				Validators: []validator.Map{mapvalidator.SizeAtLeast(1),
					mapvalidator.KeysAre(stringvalidator.RegexMatches(slurm.TRESNamePattern, "must be a TRES name such as gres/gpu")),
					mapvalidator.ValueInt64sAre(int64validator.AtLeast(0))},
			},
			"max_jobs_per_user": schema.Int64Attribute{
				MarkdownDescription: "`MaxJobsPerUser`: the most jobs one user may run at once. Unset, no limit.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
			},
		},
	}
}

func (m *slurmQOSModel) want(ctx context.Context, diags *diag.Diagnostics) slurm.QOS {
	q := slurm.QOS{Name: m.Name.ValueString(), Description: m.Description.ValueString(), Priority: int(m.Priority.ValueInt64()),
		MaxJobsPerUser: int(m.MaxJobsPerUser.ValueInt64())}
	if !m.MaxTRESPerUser.IsNull() && !m.MaxTRESPerUser.IsUnknown() {
		diags.Append(m.MaxTRESPerUser.ElementsAs(ctx, &q.MaxTRESPerUser, false)...)
	}
	return q
}

func (m *slurmQOSModel) set(q slurm.QOS) {
	m.ID, m.Name, m.Priority = types.StringValue(q.Name), types.StringValue(q.Name), types.Int64Value(int64(q.Priority))
	m.Description = types.StringValue(q.Description)
	m.MaxJobsPerUser = int64OrNull(int64(q.MaxJobsPerUser))
	if len(q.MaxTRESPerUser) == 0 {
		m.MaxTRESPerUser = types.MapNull(types.Int64Type)
		return
	}
	elems := make(map[string]attr.Value, len(q.MaxTRESPerUser))
	for k, v := range q.MaxTRESPerUser {
		elems[k] = types.Int64Value(v)
	}
	m.MaxTRESPerUser = types.MapValueMust(types.Int64Type, elems)
}

// qosObject is how this resource reaches slurmdbd.
var qosObject = sacctmgrObject[slurm.QOS]{
	title: "Slurm QOS", object: "the QOS",
	read: slurm.ReadQOS, ensure: slurm.EnsureQOS, remove: slurm.DeleteQOS,
	keep: func(want *slurm.QOS, have slurm.QOS) {
		if want.Description == "" {
			want.Description = have.Description
		}
	},
	ensureAdvice: ". A limit on a gres TRES such as gres/gpu needs slurmctld to have run with it in gpucluster_slurm_accounting's tres: set controller = gpucluster_slurm_activation.NAME.id",
}

func (m slurmQOSModel) target() (controller, name string) {
	return m.Controller.ValueString(), m.Name.ValueString()
}
