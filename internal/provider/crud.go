package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// The steps every resource's Create, Read, Update and ModifyPlan are made of: the request's plan,
// state or config read into the resource's model, and the model stored back. A resource's own
// work sits between them, in the converge or read function it hands over.

// modelGetter is what a request's plan, state and config have in common.
type modelGetter interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// modelFrom reads a plan, state or config into its model; ok is false once diags holds an error.
func modelFrom[M any](ctx context.Context, from modelGetter, diags *diag.Diagnostics) (m M, ok bool) {
	diags.Append(from.Get(ctx, &m)...)
	return m, !diags.HasError()
}

// applyPlan is Create and Update: read the plan, converge the nodes to it, store what was
// applied. An Update whose converge depends on what the resource held before reads it first
// (priorModel) and hands it over in the converge function.
func applyPlan[M any](ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics, converge func(context.Context, *M) diag.Diagnostics) {
	var m M
	diags.Append(plan.Get(ctx, &m)...)
	if diags.HasError() {
		return
	}
	diags.Append(converge(ctx, &m)...)
	if diags.HasError() {
		return
	}
	diags.Append(state.Set(ctx, &m)...)
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

// readState is the start of Read for a resource whose read fills its state model from the
// hosts: ok is false when the read failed or found nothing, and then the response is already
// complete (gone means removed from state).
func readState[M any](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, read func(context.Context, *M) (bool, diag.Diagnostics)) (state M, ok bool) {
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return state, false
	}
	found, diags := read(ctx, &state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return state, false
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return state, false
	}
	return state, true
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
