package provider

import (
	"context"
	"math"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var _ datasource.DataSourceWithConfigure = (*slurmGPUHoursDataSource)(nil)

// NewSlurmGPUHoursDataSource returns the gpucluster_slurm_gpu_hours data source.
func NewSlurmGPUHoursDataSource() datasource.DataSource { return &slurmGPUHoursDataSource{} }

type slurmGPUHoursDataSource struct{ cluster *cluster }

type slurmGPUHoursModel struct {
	ID         types.String  `tfsdk:"id"`
	Controller types.String  `tfsdk:"controller"`
	Start      types.String  `tfsdk:"start"`
	End        types.String  `tfsdk:"end"`
	Users      types.List    `tfsdk:"users"`
	TotalHours types.Float64 `tfsdk:"total_gpu_hours"`
}

var gpuUsageAttrTypes = map[string]attr.Type{"user": types.StringType, "jobs": types.Int64Type, "gpu_hours": types.Float64Type}

const (
	defaultUsageStart = "now-30days"
	defaultUsageEnd   = "now"
)

func (d *slurmGPUHoursDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_gpu_hours"
}

func (d *slurmGPUHoursDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	timeValidator := stringvalidator.RegexMatches(slurm.UsageTimePattern, "must be a time sacct accepts, such as 2026-12-01, 2026-12-01T08:00:00, now or now-7days")
	resp.Schema = schema.Schema{
		MarkdownDescription: "GPU hours per user over a time window, the guide's reason for accounting: from `sacct` on the controller, each job's allocated " +
			"`gres/gpu` count times its run time within the window (`sacct -T` cuts jobs that started before `start` or ran past `end`). Running jobs count up to now. " +
			"sacct answers at once; `sreport` would wait for slurmdbd's hourly rollups. Needs `gpucluster_slurm_accounting` with `tres = [\"gres/gpu\"]`: " +
			"without it jobs record no GPUs.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The controller and window, `CONTROLLER:START..END`.",
				Computed:            true,
			},
			"controller": schema.StringAttribute{
				MarkdownDescription: "The controller, as `gpucluster_slurm_accounting.NAME.id`.",
				Required:            true,
				Validators:          []validator.String{nodeRefValidator},
			},
			"start": schema.StringAttribute{
				MarkdownDescription: "The window's start, in a form `sacct -S` takes. Defaults to `" + defaultUsageStart + "`.",
				Optional:            true,
				Validators:          []validator.String{timeValidator},
			},
			"end": schema.StringAttribute{
				MarkdownDescription: "The window's end, in a form `sacct -E` takes. Defaults to `" + defaultUsageEnd + "`.",
				Optional:            true,
				Validators:          []validator.String{timeValidator},
			},
			"users": schema.ListNestedAttribute{
				MarkdownDescription: "One entry per user who ran GPU jobs in the window, sorted by name.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"user":      schema.StringAttribute{MarkdownDescription: "The user.", Computed: true},
					"jobs":      schema.Int64Attribute{MarkdownDescription: "The user's jobs that had GPUs.", Computed: true},
					"gpu_hours": schema.Float64Attribute{MarkdownDescription: "GPUs times hours run within the window, to the second, rounded to 1/1000 hour.", Computed: true},
				}},
			},
			"total_gpu_hours": schema.Float64Attribute{
				MarkdownDescription: "The sum of `gpu_hours` over all users.",
				Computed:            true,
			},
		},
	}
}

func (d *slurmGPUHoursDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *slurmGPUHoursDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx = readingDataSource(ctx, "slurm gpu hours")
	m, ok := modelFrom[slurmGPUHoursModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	start, end := defaultUsageStart, defaultUsageEnd
	if !m.Start.IsNull() {
		start = m.Start.ValueString()
	}
	if !m.End.IsNull() {
		end = m.End.ValueString()
	}
	controller := m.Controller.ValueString()
	h, client, diags := d.cluster.accountingClient(ctx, controller)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	usage, err := slurm.ReadGPUUsage(ctx, h, client, start, end)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read GPU Usage", controller, "sacct over "+start+" to "+end+" failed",
			toolSaid(err, "Check that slurmdbd runs and sacct -a works on the controller."), err))
		return
	}
	users := make([]attr.Value, len(usage))
	var total int64
	for i, u := range usage {
		total += u.GPUSeconds
		users[i] = types.ObjectValueMust(gpuUsageAttrTypes, map[string]attr.Value{
			"user": types.StringValue(u.User), "jobs": types.Int64Value(int64(u.Jobs)), "gpu_hours": types.Float64Value(gpuHours(u.GPUSeconds)),
		})
	}
	m.ID = types.StringValue(controller + ":" + start + ".." + end)
	m.Users = types.ListValueMust(types.ObjectType{AttrTypes: gpuUsageAttrTypes}, users)
	m.TotalHours = types.Float64Value(gpuHours(total))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// gpuHours turns GPU seconds into hours, to 1/1000 hour, so a plan does not show float noise.
func gpuHours(seconds int64) float64 {
	return math.Round(float64(seconds)/3.6) / 1000
}
