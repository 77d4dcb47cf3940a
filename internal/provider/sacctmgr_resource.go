package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// sacctmgrModel is the state model of an object kept in slurmdbd: where it is, what the
// configuration wants of it, and how what slurmdbd holds is read back into it.
type sacctmgrModel[T, M any] interface {
	*M
	target() (controller, name string)
	want(ctx context.Context, diags *diag.Diagnostics) T
	set(T)
}

// sacctmgrResource is the CRUD the account, user and QOS resources share; each embeds it
// with its object and model, and keeps only its schema and what differs.
type sacctmgrResource[T, M any, PM sacctmgrModel[T, M]] struct {
	cluster *cluster
	object  sacctmgrObject[T]
	// importExample is an ID ImportState shows in its error, such as "research@login01".
	importExample string
}

func (r *sacctmgrResource[T, M, PM]) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *sacctmgrResource[T, M, PM]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

func (r *sacctmgrResource[T, M, PM]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

func (r *sacctmgrResource[T, M, PM]) converge(ctx context.Context, m *M) diag.Diagnostics {
	var diags diag.Diagnostics
	want := PM(m).want(ctx, &diags)
	if diags.HasError() {
		return diags
	}
	controller, name := PM(m).target()
	got, convergeDiags := r.object.converge(ctx, r.cluster, controller, name, want)
	diags.Append(convergeDiags...)
	if !diags.HasError() {
		PM(m).set(got)
	}
	return diags
}

// Read reads the object back; gone means removed from state.
func (r *sacctmgrResource[T, M, PM]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := readState(ctx, req, resp, func(ctx context.Context, m *M) (bool, diag.Diagnostics) {
		controller, name := PM(m).target()
		got, found, diags := r.object.lookup(ctx, r.cluster, controller, name)
		if found {
			PM(m).set(got)
		}
		return found, diags
	})
	if ok {
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	}
}

// Delete removes the object if slurmdbd still has it; job records stay.
func (r *sacctmgrResource[T, M, PM]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[M](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	controller, name := PM(&state).target()
	resp.Diagnostics.Append(r.object.delete(ctx, r.cluster, controller, name)...)
}

// ImportState takes NAME@CONTROLLER, or a bare NAME on the login node, and leaves the rest to the Read that follows.
func (r *sacctmgrResource[T, M, PM]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, controller, diags := parseNameAtController(req.ID, r.importExample, r.cluster.importLoginNode())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("controller"), controller)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
}
