package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// convergingResource brings its node to the plan in one converge for Create and Update alike;
// creating tells a create, which may set things up once, from an update, which never does.
type convergingResource[M any] interface {
	converge(ctx context.Context, m *M, creating bool) diag.Diagnostics
}

// applyConverging is Create (creating) or Update of a convergingResource: applyPlan with its
// converge.
func applyConverging[M any](ctx context.Context, r convergingResource[M], plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics, creating bool) {
	applyPlan(ctx, plan, state, diags, func(ctx context.Context, m *M) diag.Diagnostics {
		return r.converge(ctx, m, creating)
	})
}
