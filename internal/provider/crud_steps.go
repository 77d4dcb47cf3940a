package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// modelGetter is what a request's plan, state and config have in common.
type modelGetter interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// modelFrom reads a plan, state or config into its model; ok is false once diags holds an error.
func modelFrom[M any](ctx context.Context, from modelGetter, diags *diag.Diagnostics) (m M, ok bool) {
	diags.Append(from.Get(ctx, &m)...)
	return m, !diags.HasError()
}

// applyOverPrior is Create and Update for resources whose apply depends on what the resource
// held before: prior is the state Update gets, and nil on Create, where converge sees the zero model.
func applyOverPrior[M any](ctx context.Context, plan tfsdk.Plan, prior *tfsdk.State, state *tfsdk.State, diags *diag.Diagnostics,
	converge func(ctx context.Context, m *M, prior M) diag.Diagnostics) {
	var before M
	if prior != nil {
		diags.Append(prior.Get(ctx, &before)...)
	}
	applyPlan(ctx, plan, state, diags, func(ctx context.Context, m *M) diag.Diagnostics {
		return converge(ctx, m, before)
	})
}

// createKeepingPartial is Create for a resource whose converge may fail after it started
// changing nodes: once started says so, the partial model is stored even on failure, and
// Terraform keeps it as tainted, so the next apply destroys what the create made (and only that)
// before creating it again, instead of finding it on the nodes and taking it for someone else's.
func createKeepingPartial[M any](ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics,
	converge func(ctx context.Context, m *M, prior M) diag.Diagnostics, started func(M) bool) {
	var m, zero M
	diags.Append(plan.Get(ctx, &m)...)
	if diags.HasError() {
		return
	}
	converged := converge(ctx, &m, zero)
	diags.Append(converged...)
	if !converged.HasError() || started(m) {
		diags.Append(state.Set(ctx, &m)...)
	}
}

// storeRead ends a Read: it stores the refreshed model, or removes a resource found nowhere,
// and leaves the state as it was after a failed read.
func storeRead[M any](ctx context.Context, resp *resource.ReadResponse, m *M, found bool) {
	switch {
	case resp.Diagnostics.HasError():
	case !found:
		resp.State.RemoveResource(ctx)
	default:
		resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
	}
}

// plannedModel reads from (the plan or the config) for a ModifyPlan that has nothing to do on
// destroy; ok is false on destroy and once diags holds an error.
func plannedModel[M any](ctx context.Context, req resource.ModifyPlanRequest, from modelGetter, diags *diag.Diagnostics) (m M, ok bool) {
	if req.Plan.Raw.IsNull() {
		return m, false
	}
	return modelFrom[M](ctx, from, diags)
}

// priorModel is the state a plan starts from: the zero model when the resource is being created.
func priorModel[M any](ctx context.Context, state tfsdk.State, diags *diag.Diagnostics) (m M) {
	if !state.Raw.IsNull() {
		diags.Append(state.Get(ctx, &m)...)
	}
	return m
}

// planAndState is how a ModifyPlan that compares the plan with the prior state begins: both
// read, the state left zero on a create (creating). ok is false once diags holds an error.
func planAndState[M any](ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) (plan, state M, creating, ok bool) {
	plan, _ = modelFrom[M](ctx, req.Plan, diags)
	state = priorModel[M](ctx, req.State, diags)
	return plan, state, req.State.Raw.IsNull(), !diags.HasError()
}
