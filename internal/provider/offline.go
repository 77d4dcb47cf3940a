package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure        = (*offlineGuard)(nil)
	_ resource.ResourceWithConfigValidators = (*offlineGuard)(nil)
	_ resource.ResourceWithImportState      = (*offlineGuard)(nil)
	_ resource.ResourceWithModifyPlan       = (*offlineGuard)(nil)
	_ resource.ResourceWithValidateConfig   = (*offlineGuard)(nil)
)

// offlineGuard keeps a resource away from nodes the provider's node blocks mark offline, so a
// GPU server that is powered off or broken does not stop the plan of the rest of the cluster:
// the resource is not read while one of its nodes is offline (its state stands), an unchanged
// resource plans without asking any host, and a change that would reach the node is refused
// at plan time. One warning per offline node and run says so.
type offlineGuard struct {
	wrapper
	// hostAttrs are the attributes naming the nodes the resource reads and changes: a string
	// (node, controller) or a set of strings (nodes, auth_nodes).
	hostAttrs []string
	cluster   *cluster
}

// guardOffline wraps a resource constructor; hostAttrs are its attributes that name the
// nodes it reaches.
func guardOffline(newResource func() guardedResource, hostAttrs ...string) func() resource.Resource {
	return func() resource.Resource { return &offlineGuard{wrapper: wrapper{newResource()}, hostAttrs: hostAttrs} }
}

func (g *offlineGuard) Configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	g.cluster = g.configure(ctx, req, resp)
}

func (g *offlineGuard) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	g.inner.ImportState(transport.WithActivity(ctx, transport.Activity{Verb: "Importing", Object: req.ID}), req, resp)
}

func (g *offlineGuard) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	g.inner.Create(g.labelled(ctx, "Creating", planData(req.Plan)), req, resp)
}

func (g *offlineGuard) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	g.inner.Update(g.labelled(ctx, "Updating", planData(req.Plan)), req, resp)
}

func (g *offlineGuard) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	g.inner.Delete(g.labelled(ctx, "Deleting", req.State), req, resp)
}

// Read keeps the state as it is while one of the resource's nodes is offline.
func (g *offlineGuard) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	offline, diags := g.offlineIn(ctx, req.State)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(offline) > 0 {
		g.warnOnce(offline, &resp.Diagnostics)
		return
	}
	g.inner.Read(g.labelled(ctx, "Reading", req.State), req, resp)
}

// ModifyPlan lets an unchanged resource on an offline node plan without any host, and
// refuses a change that would reach one.
func (g *offlineGuard) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		ctx = g.labelled(ctx, "Planning", req.State)
	} else {
		ctx = g.labelled(ctx, "Planning", planData(req.Plan))
	}
	var offline []string
	for _, data := range []tfsdk.State{req.State, {Schema: req.Plan.Schema, Raw: req.Plan.Raw}} {
		nodes, diags := g.offlineIn(ctx, data)
		resp.Diagnostics.Append(diags...)
		offline = append(offline, nodes...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	sort.Strings(offline)
	offline = slices.Compact(offline)
	switch {
	case len(offline) == 0:
		if r, ok := g.inner.(resource.ResourceWithModifyPlan); ok {
			r.ModifyPlan(ctx, req, resp)
		}
	case !req.State.Raw.IsNull() && !req.Plan.Raw.IsNull() && req.Plan.Raw.Equal(req.State.Raw):
		g.warnOnce(offline, &resp.Diagnostics)
	default:
		action := "change"
		switch {
		case req.Plan.Raw.IsNull():
			action = "destroy"
		case req.State.Raw.IsNull():
			action = "create"
		}
		resp.Diagnostics.AddError("Node Offline",
			fmt.Sprintf("This plan would %s a resource on %s, which the provider's node block marks offline = true, so the provider does not connect to it.\n\n"+
				"Nothing on any host was changed. Keep this change out of the configuration until the node is back, then remove offline = true and apply it; "+
				"everything else plans and applies meanwhile. A server that never comes back: remove the resource from state with terraform state rm.",
				action, strings.Join(offline, ", ")))
	}
}

// offlineIn lists the offline nodes that data's host attributes name; null data names none.
func (g *offlineGuard) offlineIn(ctx context.Context, data tfsdk.State) ([]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	if g.cluster == nil || data.Raw.IsNull() || !g.cluster.anyOffline() {
		return nil, diags
	}
	var offline []string
	for _, a := range g.hostAttrs {
		var refs []string
		typ, err := data.Schema.TypeAtPath(ctx, path.Root(a))
		if err != nil {
			diags.AddError("Provider Error", fmt.Sprintf("The offline guard names attribute %s, which the schema lacks: %s", a, err))
			continue
		}
		switch typ.(type) {
		case types.SetType:
			var set types.Set
			diags.Append(data.GetAttribute(ctx, path.Root(a), &set)...)
			if !set.IsNull() && !set.IsUnknown() {
				diags.Append(set.ElementsAs(ctx, &refs, false)...)
			}
		case types.ListType:
			var list types.List
			diags.Append(data.GetAttribute(ctx, path.Root(a), &list)...)
			if !list.IsNull() && !list.IsUnknown() {
				diags.Append(list.ElementsAs(ctx, &refs, false)...)
			}
		default:
			var s types.String
			diags.Append(data.GetAttribute(ctx, path.Root(a), &s)...)
			if !s.IsNull() && !s.IsUnknown() {
				refs = append(refs, s.ValueString())
			}
		}
		for _, ref := range refs {
			if g.cluster.isOffline(ref) {
				offline = append(offline, ref)
			}
		}
	}
	return offline, diags
}

// warnOnce adds the warning about each offline node the first time a resource meets it in this
// run, so the plan shows it once however many resources live there.
func (g *offlineGuard) warnOnce(nodes []string, diags *diag.Diagnostics) {
	for _, n := range nodes {
		o, _ := g.cluster.override(n)
		if _, seen := g.cluster.offlineWarned.LoadOrStore(o.name, true); seen {
			continue
		}
		diags.AddWarning("Node "+o.name+" Is Offline",
			fmt.Sprintf("The provider's node block marks %s offline = true: the provider does not connect to it, the resources on it are not read (their state stands) "+
				"and a change to them is refused at plan time, while the rest of the cluster plans and applies. "+
				"Once the node is back, remove offline = true: the next plan reads it again and shows what changed there meanwhile.", o.name))
	}
}
