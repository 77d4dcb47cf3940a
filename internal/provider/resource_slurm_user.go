package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var (
	_ resource.ResourceWithConfigure      = (*slurmUserResource)(nil)
	_ resource.ResourceWithImportState    = (*slurmUserResource)(nil)
	_ resource.ResourceWithValidateConfig = (*slurmUserResource)(nil)
)

// NewSlurmUserResource returns the gpucluster_slurm_user resource.
func NewSlurmUserResource() guardedResource {
	return &slurmUserResource{sacctmgrResource[slurm.AccountingUser, slurmUserModel, *slurmUserModel]{object: userObject}}
}

// slurmUserResource imports by reading the associations itself, since qos and default_qos are
// set in state only when slurmdbd has them.
type slurmUserResource struct {
	sacctmgrResource[slurm.AccountingUser, slurmUserModel, *slurmUserModel]
}

type slurmUserModel struct {
	ID             types.String `tfsdk:"id"`
	Controller     types.String `tfsdk:"controller"`
	Name           types.String `tfsdk:"name"`
	Accounts       types.Set    `tfsdk:"accounts"`
	DefaultAccount types.String `tfsdk:"default_account"`
	QOS            types.Set    `tfsdk:"qos"`
	DefaultQOS     types.String `tfsdk:"default_qos"`
}

func (r *slurmUserResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_user"
}

func (r *slurmUserResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A user's membership in Slurm accounts on the cluster: one association per account, a default account, and the QOS its " +
			"associations allow. This is Slurm's accounting user, not the POSIX account, which is `gpucluster_user`; with `enforce` including `associations` " +
			"on `gpucluster_slurm_accounting`, a POSIX user without this resource cannot run jobs. " + associationsDoc +
			" When the controller and its accounting exist at plan time, the plan refuses an account that slurmdbd does not have and no `gpucluster_slurm_account` " +
			"of the configuration declares, and warns about a new user that has no Unix account on the controller (`getent passwd`) and that no `gpucluster_user` " +
			"of the configuration puts there." +
			" Import with `NAME@CONTROLLER`, for example `alice@login01` (or the bare name, as the resource's `id` shows it, when the controller is the provider's `login_node`).",
		Attributes: map[string]schema.Attribute{
			"id":         computedKeptAttribute("The user name."),
			"controller": nodeAttribute("The controller, as `gpucluster_slurm_accounting.NAME.id`. Changing it replaces the resource."),
			"name": schema.StringAttribute{
				MarkdownDescription: "The user's login name, as `gpucluster_user.NAME.name`. Changing it replaces the resource.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{assocName, stringvalidator.NoneOf("root")},
			},
			"accounts": schema.SetAttribute{
				MarkdownDescription: "The accounts the user may charge jobs to, as `gpucluster_slurm_account.NAME.name`.",
				Required:            true,
				ElementType:         types.StringType,
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(assocName)},
			},
			"default_account": schema.StringAttribute{
				MarkdownDescription: "`DefaultAccount`: the account of jobs that name none. One of `accounts`.",
				Required:            true,
				Validators:          []validator.String{assocName},
			},
			"qos": schema.SetAttribute{
				MarkdownDescription: "The QOS every association of the user allows, as `gpucluster_slurm_qos.NAME.name` (add `normal` to keep Slurm's default one). Unset, left as Slurm sets it (inherited from the account).",
				Optional:            true,
				ElementType:         types.StringType,
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(assocName)},
			},
			"default_qos": schema.StringAttribute{
				MarkdownDescription: "`DefaultQOS`: the QOS of jobs that name none. One of `qos`. Unset, left as Slurm sets it.",
				Optional:            true,
				Validators:          []validator.String{assocName},
			},
		},
	}
}

// ValidateConfig refuses defaults outside their lists, before any host is asked.
func (r *slurmUserResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, ok := modelFrom[slurmUserModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	if fullyKnown(m.Accounts) && !m.DefaultAccount.IsUnknown() && !slices.Contains(setStrings(ctx, m.Accounts, &resp.Diagnostics), m.DefaultAccount.ValueString()) {
		resp.Diagnostics.AddAttributeError(path.Root("default_account"), "Default Account Not In Accounts",
			"default_account "+m.DefaultAccount.String()+" is not one of accounts: Slurm refuses a default account the user has no association with. No host was asked or changed.")
	}
	if !m.DefaultQOS.IsNull() && !m.DefaultQOS.IsUnknown() && fullyKnown(m.QOS) && !slices.Contains(setStrings(ctx, m.QOS, &resp.Diagnostics), m.DefaultQOS.ValueString()) {
		resp.Diagnostics.AddAttributeError(path.Root("default_qos"), "Default QOS Not In QOS",
			"default_qos "+m.DefaultQOS.String()+" is not one of qos: Slurm refuses a default QOS the associations do not allow. No host was asked or changed.")
	}
}

func (m *slurmUserModel) want(ctx context.Context, diags *diag.Diagnostics) slurm.AccountingUser {
	u := slurm.AccountingUser{Name: m.Name.ValueString(), Accounts: setStrings(ctx, m.Accounts, diags),
		DefaultAccount: m.DefaultAccount.ValueString(), DefaultQOS: m.DefaultQOS.ValueString()}
	if !m.QOS.IsNull() {
		u.QOS = setStrings(ctx, m.QOS, diags)
	}
	return u
}

// set reads u back into m; qos and default_qos stay unset when the configuration leaves them
// to Slurm.
func (m *slurmUserModel) set(u slurm.AccountingUser) {
	m.ID, m.Name = types.StringValue(u.Name), types.StringValue(u.Name)
	m.Accounts, m.DefaultAccount = stringSet(u.Accounts), types.StringValue(u.DefaultAccount)
	if !m.QOS.IsNull() {
		m.QOS = stringSet(u.QOS)
	}
	if !m.DefaultQOS.IsNull() {
		m.DefaultQOS = types.StringValue(u.DefaultQOS)
	}
}

// userObject is how this resource reaches slurmdbd.
var userObject = sacctmgrObject[slurm.AccountingUser]{
	title: "Slurm User", object: "the associations of user",
	read: slurm.ReadUser, ensure: slurm.EnsureUser, remove: slurm.DeleteUser,
	removeAdvice: " (Slurm refuses while the user has jobs running)",
}

func (m slurmUserModel) target() (controller, name string) {
	return m.Controller.ValueString(), m.Name.ValueString()
}

// ImportState takes NAME@CONTROLLER, or a bare NAME on the login node, and reads the associations, QOS included.
func (r *slurmUserResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, controller, diags := parseNameAtController(req.ID, "alice@login01", r.cluster.importLoginNode())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	u, found, diags := userObject.lookup(ctx, r.cluster, controller, name)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("No Slurm User To Import", "slurmdbd has no association of user "+name+" on the cluster: create the resource instead.")
		return
	}
	m := slurmUserModel{Controller: types.StringValue(controller), QOS: stringSetOrNull(u.QOS), DefaultQOS: stringOrNull(u.DefaultQOS)}
	m.set(u)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
