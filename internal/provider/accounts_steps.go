package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

// accountNames is the one name of kind as readAccounts takes it: users, then groups.
func accountNames(kind users.Kind, name string) (userNames, groupNames []string) {
	if kind == users.KindGroup {
		return nil, []string{name}
	}
	return []string{name}, nil
}

// accountNodeStatus reads the account on each node and makes node_status from what diff finds
// there; found is false when no node holds it. After a failed read diags holds the error.
func (c *cluster) accountNodeStatus(ctx context.Context, diags *diag.Diagnostics, kind users.Kind, name string, nodes types.Set,
	diff func(node string, st users.State) (present bool, drift []string)) (status types.Map, found bool) {
	userNames, groupNames := accountNames(kind, name)
	observed, readDiags := c.readAccounts(ctx, setStrings(ctx, nodes, diags), userNames, groupNames)
	diags.Append(readDiags...)
	if diags.HasError() {
		return status, false
	}
	drift, present := map[string][]string{}, 0
	for node, st := range observed {
		there, problems := diff(node, st)
		if there {
			present++
		}
		drift[node] = problems
	}
	return setNodeStatus(diags, string(kind)+" "+name, drift, present)
}

// removalOf is how an account of kind is removed from a node, and what to do when that is blocked.
func removalOf(kind users.Kind) (remove func(context.Context, transport.Executor, string) (bool, error), inUseAdvice string) {
	if kind == users.KindGroup {
		return users.RemoveGroup, groupInUseAdvice
	}
	return users.RemoveUser, userBusyAdvice
}

// destroyAccount is Delete for users and groups: the account goes from the nodes where the
// resource created it, and stays where it was adopted.
func (c *cluster) destroyAccount(ctx context.Context, diags *diag.Diagnostics, kind users.Kind, name string, id int64, nodes, adoptedOn types.Set) {
	remove, inUseAdvice := removalOf(kind)
	created := missingFrom(setStrings(ctx, nodes, diags), setStrings(ctx, adoptedOn, diags))
	diags.Append(c.removeAccount(ctx, created, kind, name, id, remove, inUseAdvice)...)
}

// coveredNodes are the node lists a converge of a user or group works from: the nodes it covers
// now, those it covered before, and those of the latter where it found the account already there.
func coveredNodes(ctx context.Context, diags *diag.Diagnostics, nodes, priorNodes, adoptedBefore types.Set) (now, before, adopted []string) {
	return setStrings(ctx, nodes, diags), setStrings(ctx, priorNodes, diags), setStrings(ctx, adoptedBefore, diags)
}

// removeFromDropped removes the account from the nodes dropped from nodes since the last apply,
// except those where the resource found it already there.
func (c *cluster) removeFromDropped(ctx context.Context, kind users.Kind, name string, before, now, adoptedBefore []string) diag.Diagnostics {
	remove, inUseAdvice := removalOf(kind)
	happened := "Removing the account record of " + name + " from a node dropped from nodes failed"
	if kind == users.KindGroup {
		happened = "Removing group " + name + " from a node dropped from nodes failed"
	}
	dropped := missingFrom(missingFrom(before, now), adoptedBefore)
	return c.changeOnEachNode(ctx, dropped, func(h *transport.Host) (bool, error) { return remove(ctx, h, name) },
		"Cannot Remove "+titleKind(kind), happened, inUseAdvice)
}

// recordedAttribute is gpucluster_user's and gpucluster_group's recorded.
func recordedAttribute(kind users.Kind) schema.BoolAttribute {
	_, idName := accountPlan{kind: kind}.idAttr()
	return schema.BoolAttribute{
		MarkdownDescription: fmt.Sprintf("Whether the UID ledger `%s` on the login node lists this %s with this %s. "+
			"Always planned `true`: an imported %[2]s, or one whose ledger line was deleted by hand, reads `false` and shows "+
			"`recorded = false -> true` in the plan; the apply writes the ledger line and, when nothing else changes, nothing more on any node. "+
			"State from a provider version without this attribute reads it from the ledger at the next refresh.", users.LedgerPath, kind, strings.ToUpper(idName)),
		Computed: true,
	}
}

// recordedInLedger is what Read stores in recorded: whether the login node's ledger lists name
// with id. With no login node to ask (none set, or marked offline) the state stands, where
// state from before recorded existed counts as recorded.
func (c *cluster) recordedInLedger(ctx context.Context, diags *diag.Diagnostics, kind users.Kind, name string, id int64, prior types.Bool) types.Bool {
	if node := c.settings.loginNode; node == "" || c.isOffline(node) {
		return types.BoolValue(!unrecorded(prior))
	}
	ledger, _, readDiags := c.readLedger(ctx)
	diags.Append(readDiags...)
	if readDiags.HasError() {
		return prior
	}
	return types.BoolValue(ledger.Records(kind, name, id))
}

// updateAccount is Update for users and groups. A plan that differs from the state in recorded
// alone (an import, or a ledger line deleted by hand) claims the ID in the ledger, under the
// ledger's lock as every claim, and changes nothing on the nodes; any other plan converges the
// account, which claims the ID too.
func updateAccount[M any](ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse,
	claim func(context.Context, *M) diag.Diagnostics, converge func(context.Context, *M, M) diag.Diagnostics) {
	if onlyRecordedDiffers(req.Plan.Raw, req.State.Raw) {
		applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, claim)
		return
	}
	prior := priorModel[M](ctx, req.State, &resp.Diagnostics)
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, func(ctx context.Context, m *M) diag.Diagnostics {
		return converge(ctx, m, prior)
	})
}
