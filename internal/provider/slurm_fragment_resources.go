package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// slurmFragmentKind is what gpucluster_slurm_node and gpucluster_slurm_partition differ in, as
// resources that each keep one definition D in a fragment of its own on the controller.
type slurmFragmentKind[D any] struct {
	resource string
	attr     func(field string) path.Path
	fragment func(D) (slurm.Fragment, error)
	file     func(name string) string
	defs     func(slurm.Fragments) []D
	name     func(D) string
}

// planChange tells the activation's plan what the definition changes on the controller and
// asks the controller what that would do; a definition not known yet is a change still unknown.
func (k slurmFragmentKind[D]) planChange(ctx context.Context, c *cluster, diags *diag.Diagnostics, controller string, def D, known bool, attr path.Path, what string) {
	if !known {
		c.planSlurmChange(controller, nil)
		return
	}
	frag, err := k.fragment(def)
	if err != nil {
		diags.Append(invalidSetting(k.resource, k.attr, err))
		return
	}
	c.planSlurmChange(controller, &frag)
	diags.Append(c.previewSlurm(ctx, attr, controller, what, frag)...)
}

// planRemoval tells the activation's plan that the fragment named name goes.
func (k slurmFragmentKind[D]) planRemoval(c *cluster, controller, name string) {
	frag := slurm.RemoveFragment(k.file(name))
	c.planSlurmChange(controller, &frag)
}

// write puts the definition's fragment on the controller.
func (k slurmFragmentKind[D]) write(ctx context.Context, c *cluster, controller string, def D, known bool) diag.Diagnostics {
	if !known {
		return diag.Diagnostics{unknownAtApply(k.resource)}
	}
	frag, err := k.fragment(def)
	if err != nil {
		return diag.Diagnostics{invalidSetting(k.resource, k.attr, err)}
	}
	return c.writeSlurmFragments(ctx, controller, frag)
}

// remove deletes the fragment named name; the activation then takes its line out of slurm.conf.
func (k slurmFragmentKind[D]) remove(ctx context.Context, c *cluster, controller, name string) diag.Diagnostics {
	return c.writeSlurmFragments(ctx, controller, slurm.RemoveFragment(k.file(name)))
}

// read finds the definition named name among the controller's fragments, with the status it
// came in; found is false when no fragment defines it or the read failed.
func (k slurmFragmentKind[D]) read(ctx context.Context, c *cluster, diags *diag.Diagnostics, controller, name string) (def D, st slurm.Status, found bool) {
	st, readDiags := c.readSlurmStatus(ctx, controller)
	diags.Append(readDiags...)
	if diags.HasError() {
		return def, st, false
	}
	for _, d := range k.defs(st.Fragments) {
		if k.name(d) == name {
			return d, st, true
		}
	}
	return def, st, false
}

// importState takes NAME@CONTROLLER or a bare NAME on the login node (example shows one) and
// stores the model newModel makes from them; Read then reads the definition.
func importState[M any](ctx context.Context, c *cluster, req resource.ImportStateRequest, resp *resource.ImportStateResponse, example string, newModel func(controller types.String, name string) M) {
	name, controller, diags := parseNameAtController(req.ID, example, c.importLoginNode())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m := newModel(types.StringValue(controller), name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
