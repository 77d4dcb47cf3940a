package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
func removalOf(kind users.Kind) (remove func(context.Context, users.Executor, string) (bool, error), inUseAdvice string) {
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

// claimImported records an imported account's ID in the ledger, unless the ledger gave it to
// another name.
func (c *cluster) claimImported(ctx context.Context, kind users.Kind, name string, id int64, attr path.Path) diag.Diagnostics {
	diags := c.checkLedger(ctx, kind, name, id, attr)
	if diags.HasError() {
		return diags
	}
	return append(diags, c.claim(ctx, kind, name, id)...)
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
