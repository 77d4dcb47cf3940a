package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
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
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure   = (*slurmAccountResource)(nil)
	_ resource.ResourceWithImportState = (*slurmAccountResource)(nil)
)

// NewSlurmAccountResource returns the gpucluster_slurm_account resource.
func NewSlurmAccountResource() resource.Resource { return &slurmAccountResource{} }

type slurmAccountResource struct{ cluster *cluster }

type slurmAccountModel struct {
	ID          types.String `tfsdk:"id"`
	Controller  types.String `tfsdk:"controller"`
	Name        types.String `tfsdk:"name"`
	Parent      types.String `tfsdk:"parent"`
	Fairshare   types.Int64  `tfsdk:"fairshare"`
	Description types.String `tfsdk:"description"`
}

// assocName validates account, user and QOS names as Slurm stores them.
var assocName = stringvalidator.RegexMatches(slurm.AssocNamePattern, "must be lower-case letters, digits, '_', '.' and '-' (Slurm stores names in lower case)")

func (r *slurmAccountResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_account"
}

func (r *slurmAccountResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Slurm account on the cluster: a node in the association tree under `root`, with its fair-share. Users are put in accounts with " +
			"`gpucluster_slurm_user`. " + associationsDoc + " Import with `NAME@CONTROLLER`, for example `research@login01`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The account name.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"controller": schema.StringAttribute{
				MarkdownDescription: "The controller, as `gpucluster_slurm_accounting.NAME.id`. Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a node name or address")},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "The account's name. Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{assocName, stringvalidator.NoneOf("root")},
			},
			"parent": schema.StringAttribute{
				MarkdownDescription: "The parent account, `root` or another `gpucluster_slurm_account.NAME.name`. Defaults to `root`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("root"),
				Validators:          []validator.String{assocName},
			},
			"fairshare": schema.Int64Attribute{
				MarkdownDescription: "`Fairshare`: the account's share among its siblings. Defaults to 1.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(1),
				Validators:          []validator.Int64{int64validator.Between(1, 1<<30)},
			},
			"description": schema.StringAttribute{
				MarkdownDescription: "`Description`, in lower case, as Slurm stores it. Unset, Slurm uses the account's name.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Validators:          []validator.String{stringvalidator.LengthBetween(1, 128), descriptionValidator},
			},
		},
	}
}

// descriptionValidator refuses what would break sacctmgr's parsable output.
var descriptionValidator = stringvalidator.RegexMatches(slurm.DescriptionPattern,
	"must be lower case (Slurm stores descriptions in lower case) and cannot hold '|', quotes, backslashes or line breaks")

func (r *slurmAccountResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (m slurmAccountModel) account() slurm.Account {
	return slurm.Account{Name: m.Name.ValueString(), Parent: m.Parent.ValueString(), Fairshare: int(m.Fairshare.ValueInt64()),
		Description: m.Description.ValueString()}
}

func (m *slurmAccountModel) set(a slurm.Account) {
	m.ID, m.Name = types.StringValue(a.Name), types.StringValue(a.Name)
	m.Parent, m.Fairshare = types.StringValue(a.Parent), types.Int64Value(int64(a.Fairshare))
	m.Description = types.StringValue(a.Description)
}

// accountObject is how this resource reaches slurmdbd.
var accountObject = sacctmgrObject[slurm.Account]{
	title: "Slurm Account", object: "the account",
	read: slurm.ReadAccount, ensure: slurm.EnsureAccount, remove: slurm.DeleteAccount,
	ensureAdvice: "",
	removeAdvice: " (users still in it must be removed first)",
}

func (m slurmAccountModel) target() (controller, name string) {
	return m.Controller.ValueString(), m.Name.ValueString()
}

func (r *slurmAccountResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

func (r *slurmAccountResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

func (r *slurmAccountResource) converge(ctx context.Context, m *slurmAccountModel) diag.Diagnostics {
	got, diags := accountObject.converge(ctx, r.cluster, m.Controller.ValueString(), m.Name.ValueString(), m.account(), func(want *slurm.Account, have slurm.Account) {
		if want.Description == "" {
			want.Description = have.Description
		}
	})
	if !diags.HasError() {
		m.set(got)
	}
	return diags
}

func (r *slurmAccountResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readObject[slurm.Account, slurmAccountModel](ctx, accountObject, r.cluster, req, resp)
}

// Delete removes the account's association; job records stay.
func (r *slurmAccountResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteObject[slurm.Account, slurmAccountModel](ctx, accountObject, r.cluster, req, resp)
}

// ImportState takes NAME@CONTROLLER.
func (r *slurmAccountResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, controller, diags := parseNameAtController(req.ID, "research@login01")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("controller"), controller)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
}
