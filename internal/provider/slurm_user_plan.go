package provider

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithModifyPlan = (*slurmAccountResource)(nil)
	_ resource.ResourceWithModifyPlan = (*slurmUserResource)(nil)
)

// ModifyPlan records the account as declared in this run, so that a Slurm user planned after
// it may name it before slurmdbd has it.
func (r *slurmAccountResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.cluster == nil {
		return
	}
	plan, ok := modelFrom[slurmAccountModel](ctx, req.Plan, &resp.Diagnostics)
	if ok && !plan.Controller.IsUnknown() && !plan.Name.IsUnknown() {
		r.cluster.planSlurmAccount(plan.Controller.ValueString(), plan.Name.ValueString())
	}
}

// ModifyPlan refuses accounts that neither slurmdbd nor this configuration has, and warns
// about a user the controller has no Unix account for, when the controller can tell. While
// the controller or accounting is not known yet (set up in the same apply), the final plan
// that Terraform makes right before this resource's apply runs the checks.
func (r *slurmUserResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.cluster == nil || !r.cluster.settingsKnown() {
		return
	}
	plan, state, creating, ok := planAndState[slurmUserModel](ctx, req, &resp.Diagnostics)
	if !ok || plan.Controller.IsUnknown() || plan.Name.IsUnknown() || !fullyKnown(plan.Accounts) ||
		(!creating && plan.Accounts.Equal(state.Accounts) && plan.Controller.Equal(state.Controller)) {
		return
	}
	accounts := setStrings(ctx, plan.Accounts, &resp.Diagnostics)
	resp.Diagnostics.Append(r.checkOnController(ctx, plan.Controller.ValueString(), plan.Name.ValueString(), accounts, creating)...)
}

// checkOnController asks the controller for the accounts slurmdbd has and, for a new user,
// whether the user has a Unix account there.
func (r *slurmUserResource) checkOnController(ctx context.Context, controller, name string, accounts []string, creating bool) diag.Diagnostics {
	c := r.cluster
	st, diags := c.readSlurmStatus(ctx, controller)
	if diags.HasError() {
		return diags
	}
	client, err := slurm.ClientFor(st.Fragments)
	if errors.Is(err, slurm.ErrNoController) || errors.Is(err, slurm.ErrNoAccounting) {
		return diags
	}
	h, err := c.host(ctx, controller)
	if err != nil {
		d := connectError(controller, err)
		diags.AddAttributeError(path.Root("controller"), d.Summary(), d.Detail())
		return diags
	}
	known, err := slurm.AccountNames(ctx, h, client)
	if err != nil {
		diags.Append(nodeAttributeWarning(path.Root("accounts"), "Slurm Accounts Not Checked", controller,
			"Listing slurmdbd's accounts with sacctmgr failed, so this plan could not check accounts",
			toolSaid(err, "The apply checks them again; if slurmdbd does not run, the gpucluster_slurm_accounting in this run may start it."), err))
	}
	var missing []string
	for _, a := range accounts {
		if err == nil && !slices.Contains(known, a) && !c.slurmAccountPlanned(controller, a) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		diags.Append(nodeAttributeError(path.Root("accounts"), "Slurm Account Not Found", controller,
			"slurmdbd has no account "+strings.Join(missing, ", ")+" (sacctmgr show account), and no gpucluster_slurm_account in this configuration declares it",
			"The plan stops here and no host is changed. Declare the account with a gpucluster_slurm_account and refer to it as gpucluster_slurm_account.NAME.name, "+
				"which also creates it first, or correct the name.", nil))
	}
	if creating && !diags.HasError() {
		diags.Append(r.warnWithoutUnixAccount(ctx, h, controller, name)...)
	}
	return diags
}

// warnWithoutUnixAccount warns about a Slurm user that has no Unix account on the controller
// and that no gpucluster_user in this run puts there.
func (r *slurmUserResource) warnWithoutUnixAccount(ctx context.Context, h transport.Executor, controller, name string) diag.Diagnostics {
	var diags diag.Diagnostics
	if r.cluster.userPlannedOn(controller, name) {
		return diags
	}
	found, err := slurm.HasUnixAccount(ctx, h, name)
	switch {
	case err != nil:
		diags.Append(nodeAttributeError(path.Root("name"), "Cannot Read Unix Accounts", controller, "Looking "+name+" up with getent passwd failed", adviceRead, err))
	case !found:
		diags.Append(nodeAttributeWarning(path.Root("name"), "Slurm User Without Unix Account", controller,
			"User "+name+" has no Unix account there (getent passwd "+name+" finds none), and no gpucluster_user in this configuration declares it on that node",
			"Slurm keeps the association, but "+name+" can run no job until the account exists. Declare it with a gpucluster_user and set name = gpucluster_user.NAME.name, "+
				"or correct the name.", nil))
	}
	return diags
}
