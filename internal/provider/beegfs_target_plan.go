package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// targetDeclarations are the storage targets planned in this run, so that two resources with
// one target ID, or one node ID on two hosts, are refused at plan even before either exists
// (one node and path declared twice is ownedGuard's to refuse). Every apply and plan configures the provider anew, so each run starts
// with no declarations (see declareRule).
type targetDeclarations struct {
	mu    sync.Mutex
	byDir map[string]beegfs.TargetIdentity
}

// declare records t unless its IDs conflict with another declared target's; attr names the
// attribute that conflicts.
func (d *targetDeclarations) declare(t beegfs.TargetIdentity) (attr string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := nodePathID(t.Host, t.Directory)
	others := make([]beegfs.TargetIdentity, 0, len(d.byDir))
	for k, other := range d.byDir {
		if k != key {
			other.Declared = true
			others = append(others, other)
		}
	}
	if err := beegfs.CheckIDConflicts(others, t); err != nil {
		return beegfs.ConflictAttribute(others, t), err
	}
	if d.byDir == nil {
		d.byDir = map[string]beegfs.TargetIdentity{}
	}
	d.byDir[key] = t
	return "", nil
}

func (r *beegfsTargetResource) warnDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	state, ok := modelFrom[beegfsTargetModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	if !state.ForceDestroyData.ValueBool() {
		resp.Diagnostics.Append(r.planDeregister(ctx, state)...)
		return
	}
	resp.Diagnostics.AddWarning("Storage Target Data Will Be Deleted",
		fmt.Sprintf("force_destroy_data is true: destroying %s deletes %s on node %s with all its data and takes it out of %s. This cannot be undone.",
			beegfsTargetResourceName, state.Path.ValueString(), state.Node.ValueString(), beegfs.StorageConfPath))
}

// planDeregister says in the plan what destroy does to a target whose data it keeps, and
// refuses it while the target holds file chunks and allow_deregister_with_data is not set.
func (r *beegfsTargetResource) planDeregister(ctx context.Context, state beegfsTargetModel) diag.Diagnostics {
	var diags diag.Diagnostics
	node, dir := state.Node.ValueString(), state.Path.ValueString()
	if r.cluster == nil || !r.cluster.settingsKnown() {
		return diags
	}
	h, ok := r.cluster.connect(ctx, node, &diags)
	if !ok {
		return diags
	}
	return deregisterCheck(ctx, h, node, dir, state.TargetID.ValueInt64(), state.AllowWithData.ValueBool())
}

// deregisterCheck looks for file chunks in the target's directory and says what destroying it
// without its data means (deregisterDiag).
func deregisterCheck(ctx context.Context, h transport.Executor, node, dir string, target int64, allowed bool) diag.Diagnostics {
	var diags diag.Diagnostics
	chunks, err := beegfs.HoldsChunks(ctx, h, dir)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Storage", node, "Looking for file chunks in "+dir+" failed", adviceRead, err))
		return diags
	}
	diags.Append(deregisterDiag(node, dir, target, chunks, allowed))
	return diags
}

// deregisterDiag is what the plan says about a target destroyed without its data: a refusal
// while it holds chunks and that is not allowed, a warning otherwise.
func deregisterDiag(node, dir string, target int64, chunks, allowed bool) diag.Diagnostic {
	what := fmt.Sprintf("Destroying %s takes target %d out of %s and leaves %s and its files on the disk.", beegfsTargetResourceName, target, beegfs.StorageConfPath, dir)
	switch {
	case chunks && !allowed:
		return nodeAttributeError(path.Root("allow_deregister_with_data"), "Storage Target Holds Data", node,
			what+" The target still holds file chunks: every BeeGFS file with a chunk there would become unreadable",
			"Nothing was changed. Move the data off the target first (beegfs migrate), then apply again; or set allow_deregister_with_data = true and apply "+
				"before removing the target, to deregister it with its chunks left on the disk; or force_destroy_data = true to delete them.", nil)
	case chunks:
		return nodeWarning("Storage Target Deregistered With Data", node,
			what+" It still holds file chunks, and allow_deregister_with_data is true: BeeGFS files with a chunk there become unreadable", "", nil)
	}
	return nodeWarning("Storage Target Deregistered", node, what+" It holds no file chunks", "", nil)
}

// defaultTargetID is the guide's target ID for a node, or why it has none.
func defaultTargetID(nodeNumID int64) (int64, diag.Diagnostics) {
	var diags diag.Diagnostics
	id, err := beegfs.DefaultTargetID(nodeNumID)
	if err != nil {
		diags.Append(settingError(path.Root("target_id"), "No Default Target ID", "The guide's numbering cannot give this node a target ID", "Set target_id.", err))
	}
	return id, diags
}
