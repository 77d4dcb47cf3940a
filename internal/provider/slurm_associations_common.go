package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// associationsDoc is how the Slurm account, user and QOS resources say where they apply.
const associationsDoc = "It is kept in slurmdbd, through `sacctmgr` on the controller, which finds slurmdbd and the cluster's name in the fragments of " +
	"`gpucluster_slurm_accounting` and `gpucluster_slurm_controller`: set `controller = gpucluster_slurm_accounting.NAME.id`, so accounting is set up first. " +
	"Destroying it removes the association only: slurmdbd keeps every job record, and `sacct` still shows them."

// accountingClient connects to the controller and finds slurmdbd from its fragments.
func (c *cluster) accountingClient(ctx context.Context, controller string) (*transport.Host, slurm.AccountingClient, diag.Diagnostics) {
	st, diags := c.readSlurmStatus(ctx, controller)
	if diags.HasError() {
		return nil, slurm.AccountingClient{}, diags
	}
	client, err := slurm.ClientFor(st.Fragments)
	if err != nil {
		what := "The controller has no " + slurm.FragmentDir + "/" + slurm.AccountingFile + ", so no slurmdbd is known there"
		if errors.Is(err, slurm.ErrNoController) {
			what = "The controller has no " + slurm.FragmentDir + "/" + slurm.ControllerFile + " yet"
		}
		diags.Append(nodeError("Slurm Accounting Not Set Up", controller, what,
			"Set controller = gpucluster_slurm_accounting.NAME.id, so slurmdbd is set up first. Nothing was changed.", err))
		return nil, slurm.AccountingClient{}, diags
	}
	h, diags := c.slurmController(ctx, controller)
	return h, client, diags
}

// sacctmgrError is the diagnostic of a failed sacctmgr change.
func sacctmgrError(summary, controller, happened string, err error) diag.Diagnostic {
	return nodeError(summary, controller, happened,
		"Check that slurmdbd runs (systemctl status slurmdbd on the accounting node) and what sacctmgr says above, then apply again: "+
			"each change runs only when the association differs.", err)
}
