package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
func NewSlurmAccountResource() guardedResource {
	return &slurmAccountResource{sacctmgrResource[slurm.Account, slurmAccountModel, *slurmAccountModel]{object: accountObject, importExample: "research@login01"}}
}

type slurmAccountResource struct {
	sacctmgrResource[slurm.Account, slurmAccountModel, *slurmAccountModel]
}

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
			"`gpucluster_slurm_user`. " + associationsDoc + " Import with `NAME@CONTROLLER`, for example `research@login01` (or the bare name, as the resource's `id` shows it, when the controller is the provider's `login_node`).",
		Attributes: map[string]schema.Attribute{
			"id":         computedKeptAttribute("The account name."),
			"controller": nodeAttribute("The controller, as `gpucluster_slurm_accounting.NAME.id`. Changing it replaces the resource."),
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

func (m *slurmAccountModel) want(context.Context, *diag.Diagnostics) slurm.Account {
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
	keep: func(want *slurm.Account, have slurm.Account) {
		if want.Description == "" {
			want.Description = have.Description
		}
	},
	removeAdvice: " (users still in it must be removed first)",
}

func (m slurmAccountModel) target() (controller, name string) {
	return m.Controller.ValueString(), m.Name.ValueString()
}
