package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// planAndState is how a ModifyPlan that compares the plan with the prior state begins: both
// read, the state left zero on a create (creating). ok is false once diags holds an error.
func planAndState[M any](ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) (plan, state M, creating, ok bool) {
	diags.Append(req.Plan.Get(ctx, &plan)...)
	creating = req.State.Raw.IsNull()
	if !creating {
		diags.Append(req.State.Get(ctx, &state)...)
	}
	return plan, state, creating, !diags.HasError()
}
