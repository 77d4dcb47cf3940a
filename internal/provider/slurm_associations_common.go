package provider

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// associationsDoc is how the Slurm account, user and QOS resources say where they apply.
const associationsDoc = "It is kept in slurmdbd, through `sacctmgr` on the controller, which finds slurmdbd and the cluster's name in the fragments of " +
	"`gpucluster_slurm_accounting` and `gpucluster_slurm_controller`: set `controller = gpucluster_slurm_accounting.NAME.id`, so accounting is set up first. " +
	"Destroying it first waits, up to two minutes, until slurmctld has sent slurmdbd the job records it still holds (`sdiag`'s `DBD Agent queue size` is 0), " +
	"since slurmdbd drops a new association without job records outright; then it removes the association only: slurmdbd keeps every job record, and `sacct` still shows them."

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

// sacctmgrError is the diagnostic of a failed sacctmgr change, sacctmgr's own words first.
func sacctmgrError(summary, controller, happened string, err error) diag.Diagnostic {
	return nodeError(summary, controller, happened,
		toolSaid(err, "Fix what sacctmgr names, or check that slurmdbd runs (systemctl status slurmdbd on the accounting node), then apply again: "+
			"each change runs only when the association differs."), err)
}

// toolSaid puts what sacctmgr or sacct printed before todo, the advice of a diagnostic: its
// refusals often come on standard output, which no transport error holds.
func toolSaid(err error, todo string) string {
	tool, said := slurm.ToolSaid(err)
	if said == "" {
		return todo
	}
	return tool + " said:\n  " + strings.ReplaceAll(said, "\n", "\n  ") + "\n\n" + todo
}

// sacctmgrObject is what differs between the objects kept in slurmdbd (accounts, users, QOS):
// how messages name them and their sacctmgr calls. Their resources share converge, read and
// delete through it.
type sacctmgrObject[T any] struct {
	title  string // "Slurm Account", in summaries
	object string // "the account", before its name in what happened
	read   func(context.Context, transport.Executor, slurm.AccountingClient, string) (T, bool, error)
	ensure func(ctx context.Context, ex transport.Executor, c slurm.AccountingClient, want T, have *T) error
	remove func(context.Context, transport.Executor, slurm.AccountingClient, string) error
	// keep, when set, fills in want from what slurmdbd holds before a change (values the
	// configuration leaves to Slurm).
	keep func(want *T, have T)
	// ensureAdvice and removeAdvice add what a failed change or removal usually means.
	ensureAdvice, removeAdvice string
}

// converge makes the object on controller what want says and returns what slurmdbd then holds.
func (o sacctmgrObject[T]) converge(ctx context.Context, c *cluster, controller, name string, want T) (T, diag.Diagnostics) {
	var zero T
	h, client, diags := c.accountingClient(ctx, controller)
	if diags.HasError() {
		return zero, diags
	}
	have, found, err := o.read(ctx, h, client, name)
	if err != nil {
		diags.Append(sacctmgrError("Cannot Read "+o.title, controller, "Reading "+o.object+" "+name+" with sacctmgr failed", err))
		return zero, diags
	}
	var current *T
	if found {
		if o.keep != nil {
			o.keep(&want, have)
		}
		current = &have
	}
	if err := o.ensure(ctx, h, client, want, current); err != nil {
		diags.Append(sacctmgrError("Cannot Set "+o.title, controller, "Adding or changing "+o.object+" "+name+" with sacctmgr failed"+o.ensureAdvice, err))
		return zero, diags
	}
	got, found, err := o.read(ctx, h, client, name)
	if err == nil && !found {
		err = errors.New(name + " is not there after the change")
	}
	if err != nil {
		diags.Append(sacctmgrError("Cannot Read "+o.title, controller, "Reading "+o.object+" "+name+" back after the change failed", err))
	}
	return got, diags
}

// lookup reads the object; found is false when slurmdbd has no such object.
func (o sacctmgrObject[T]) lookup(ctx context.Context, c *cluster, controller, name string) (got T, found bool, diags diag.Diagnostics) {
	h, client, diags := c.accountingClient(ctx, controller)
	if diags.HasError() {
		return got, false, diags
	}
	got, found, err := o.read(ctx, h, client, name)
	if err != nil {
		diags.Append(sacctmgrError("Cannot Read "+o.title, controller, "Reading "+o.object+" "+name+" with sacctmgr failed", err))
	}
	return got, found, diags
}

// delete removes the object if slurmdbd still has it; job records stay.
func (o sacctmgrObject[T]) delete(ctx context.Context, c *cluster, controller, name string) diag.Diagnostics {
	h, client, diags := c.accountingClient(ctx, controller)
	if diags.HasError() {
		return diags
	}
	_, found, err := o.read(ctx, h, client, name)
	if err == nil && found {
		err = o.remove(ctx, h, client, name)
	}
	if err != nil {
		diags.Append(sacctmgrError("Cannot Delete "+o.title, controller, "Removing "+o.object+" "+name+" with sacctmgr failed"+o.removeAdvice, err))
	}
	return diags
}
