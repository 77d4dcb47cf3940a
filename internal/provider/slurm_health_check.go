package provider

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

func healthCheckProgramAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("Content of the health check program slurmd runs as root on its node when it starts, before it registers, and every "+
			"`health_check_interval` seconds (`HealthCheckProgram`, slurm.conf(5)). slurmd only runs it and logs a non-zero exit: acting on a problem is the "+
			"program's own job, for example `scontrol update NodeName=$SLURMD_NODENAME State=DRAIN Reason=...` (slurmd sets `SLURMD_NODENAME`). "+
			"Configless Slurm sends a prolog and an epilog to the nodes but not this program, so `gpucluster_slurm_activation` writes it to `%[1]s` on every node a "+
			"`gpucluster_slurm_node` defines (owner root, mode 0755, replaced whole and only where it differs) before it sets `HealthCheckProgram=%[1]s`: "+
			"a GPU server added later gets it from the activation that defines it. A change of the program alone is one write per node and touches no daemon. "+
			"A program missing or edited by hand on a node shows as drift in the activation's `status`, and apply writes it back; nodes the provider's node blocks "+
			"mark `offline` are skipped, and get it at the first apply once they are back. Unset (the default) removes the keys, then the file from every node, "+
			"and leaves `HealthCheckProgram` to `extra`; `gpucluster_slurm_compute`'s destroy removes the file from its node. "+
			"The program must start with an interpreter line (`#!/bin/sh`), hold no NUL byte and have at most %[2]d bytes; slurmd kills it after 60 seconds. "+
			"Needs `health_check_interval`.", slurm.HealthCheckPath, slurm.MaxJobScriptSize),
		Optional:   true,
		Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
	}
}

func healthCheckIntervalAttribute() schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: settingClassDoc("`HealthCheckInterval`: seconds between two runs of `health_check_program` on each node, which slurmctld asks of every slurmd. "+
			"Required with `health_check_program`, which slurmd never runs without it, and refused without one.", "HealthCheckInterval"),
		Optional:   true,
		Validators: []validator.Int64{int64validator.AtLeast(1)},
	}
}

func healthCheckNodeStateAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: settingClassDoc("`HealthCheckNodeState`: the node states whose nodes run `health_check_program` at each interval, from "+
			markdownList(slurm.HealthCheckNodeStates)+" (`CYCLE` spreads the runs over the interval). Unset is Slurm's `ANY`. Refused without `health_check_program`.", "HealthCheckNodeState"),
		Optional:    true,
		ElementType: types.StringType,
		Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.OneOf(slurm.HealthCheckNodeStates...))},
	}
}

// activateWithHealthCheck is slurm.Activate with the health check program on the nodes:
// slurmd runs it from its own node, so it is written there before the key that names it, and
// removed only after the key is gone. The outcome's reasons say where it was written or removed.
func (c *cluster) activateWithHealthCheck(ctx context.Context, controller string, h *transport.Host, wait time.Duration) (slurm.Outcome, diag.Diagnostics) {
	var diags diag.Diagnostics
	st, err := slurm.ReadStatus(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read Slurm Configuration", controller, "Reading the fragments in "+slurm.FragmentDir+" before the activation failed",
			"A fragment edited by hand that no longer parses must be fixed or removed by hand.", err))
		return slurm.Outcome{}, diags
	}
	content := healthCheckContent(st)
	var changed []string
	if content != "" {
		changed, diags = c.syncHealthCheck(ctx, c.healthCheckNodes(st), content)
		if diags.HasError() {
			return slurm.Outcome{}, diags
		}
	}
	out, err := slurm.Activate(ctx, h, wait)
	if err != nil {
		diags.Append(nodeError("Cannot Activate Slurm Configuration", controller,
			"Assembling, validating or activating "+slurm.ConfDir+"/slurm.conf from the fragments in "+slurm.FragmentDir+" failed", slurmActivationAdvice(err), err))
		return out, diags
	}
	if content == "" && st.NamesHealthCheck {
		var removeDiags diag.Diagnostics
		changed, removeDiags = c.syncHealthCheck(ctx, c.healthCheckNodes(st), "")
		diags.Append(removeDiags...)
	}
	out.Reasons = append(out.Reasons, changed...)
	return out, diags
}

// healthCheckContent is the program the controller's fragment declares, "" for none.
func healthCheckContent(st slurm.Status) string {
	if st.Fragments.Controller == nil {
		return ""
	}
	return st.Fragments.Controller.HealthCheckProgram
}

// healthCheckNodes are the nodes the fragments define, apart from those marked offline: the
// nodes that hold the health check program.
func (c *cluster) healthCheckNodes(st slurm.Status) []string {
	var out []string
	for _, n := range st.Fragments.Nodes {
		if !c.isOffline(n.Name) {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// healthCheckProblems reads the health check program on nodes and says, node by node, where it
// is not content ("/etc/slurm/gpucluster-healthcheck.sh differs on gpu02").
func (c *cluster) healthCheckProblems(ctx context.Context, nodes []string, content string) (map[string]string, diag.Diagnostics) {
	states, failures := readOnEachNode(ctx, c, nodes, func(h *transport.Host) (slurm.HealthCheckState, error) { return slurm.ReadHealthCheck(ctx, h) })
	problems := map[string]string{}
	for node, st := range states {
		if p := st.Problem(content); p != "" {
			problems[node] = p
		}
	}
	return problems, failureDiags(failures, "Cannot Read Health Check Program", "Reading "+slurm.HealthCheckPath+" failed",
		"Check that the node answers over SSH; while it is down, mark it offline = true in the provider's node block.")
}

// healthCheckDrift is what the refresh finds different on the nodes, in node order; none
// while the controller's fragment declares no program.
func (c *cluster) healthCheckDrift(ctx context.Context, st slurm.Status) ([]string, diag.Diagnostics) {
	content := healthCheckContent(st)
	if content == "" {
		return nil, nil
	}
	nodes := c.healthCheckNodes(st)
	problems, diags := c.healthCheckProblems(ctx, nodes, content)
	var out []string
	for _, node := range nodes {
		if p, ok := problems[node]; ok {
			out = append(out, p+" on "+node)
		}
	}
	return out, diags
}

// syncHealthCheck makes the nodes hold content at slurm.HealthCheckPath, or nothing for "":
// each node is read first and written (or the file removed) only where it differs. It
// returns what it changed, in node order.
func (c *cluster) syncHealthCheck(ctx context.Context, nodes []string, content string) ([]string, diag.Diagnostics) {
	problems, diags := c.healthCheckProblems(ctx, nodes, content)
	if diags.HasError() {
		return nil, diags
	}
	var todo []string
	for _, node := range nodes {
		if _, ok := problems[node]; ok {
			todo = append(todo, node)
		}
	}
	var (
		mu   sync.Mutex
		done = map[string]string{}
	)
	failures := c.onEachNode(ctx, todo, func(node string, h *transport.Host) error {
		what, err := applyHealthCheck(ctx, h, content)
		if err == nil {
			mu.Lock()
			done[node] = what
			mu.Unlock()
		}
		return err
	})
	var out []string
	for _, node := range todo {
		if what, ok := done[node]; ok {
			out = append(out, what+" on "+node)
		}
	}
	return out, failureDiags(failures, "Cannot Write Health Check Program", "Writing or removing "+slurm.HealthCheckPath+" failed",
		"Check the node's root file system, then apply again: the activation stays pending, and the next plan shows where.")
}

// applyHealthCheck writes content on one node, or removes the program for "", and says what it did.
func applyHealthCheck(ctx context.Context, h *transport.Host, content string) (string, error) {
	what := "wrote " + slurm.HealthCheckPath
	var err error
	if content == "" {
		what = "removed " + slurm.HealthCheckPath
		_, err = slurm.RemoveHealthCheck(ctx, h)
	} else {
		_, err = slurm.WriteHealthCheck(ctx, h, content)
	}
	if err != nil {
		return "", err
	}
	transport.Changed(ctx, h, what)
	return what, nil
}
