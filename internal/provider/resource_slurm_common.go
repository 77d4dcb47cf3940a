package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// slurmActivationAdvice is what to do after a failed slurm.Activate, chosen by what the
// error says happened on the controller: refused before any write, rolled back, or neither.
func slurmActivationAdvice(err error) string {
	var (
		undefined  *slurm.UndefinedNodesError
		refused    *slurm.RefusedError
		activation *slurm.ActivationError
	)
	pending := " The fragments stay as the resources wrote them, so the activation stays pending: the next plan shows it."
	switch {
	case errors.Is(err, transport.ErrNotLocked):
		return "Nothing was read or written: the apply ended while it waited for the controller's lock. " + adviceLock + pending
	case errors.As(err, &undefined):
		return "Nothing was activated: slurm.conf and slurmctld are as before. Every node a partition lists needs its gpucluster_slurm_node; refer to nodes as " +
			"gpucluster_slurm_node.NAME.id, and make this resource depend on every gpucluster_slurm_node and gpucluster_slurm_partition, so they are all written first." + pending
	case errors.As(err, &refused):
		return "Nothing was activated: slurm.conf and slurmctld are as before. Fix the setting the message names, then apply again." + pending
	case errors.As(err, &activation) && activation.RestoreErr == nil:
		restored := "The previous files were restored"
		if activation.WasActive {
			restored += " and slurmctld runs with them again"
		}
		return restored + ". Fix the setting slurmctld's log names, then apply again." + pending
	case errors.As(err, &activation):
		return "Restoring the previous files failed too, so slurmctld may be down or running with a half-applied configuration. Check " +
			slurm.ConfDir + " and journalctl -u slurmctld on the controller and repair them by hand; the next apply reassembles the files from the fragments in " +
			slurm.FragmentDir + "."
	}
	return "The files may be partly written. Fix the cause, then apply again: each activation reassembles " + slurm.ConfDir + " from the fragments in " + slurm.FragmentDir + "."
}

// fragmentAdvice is what to do after a failed slurm.WriteFragments.
func fragmentAdvice(err error) string {
	var refused *slurm.RefusedError
	if errors.As(err, &refused) {
		return "Nothing was written. A fragment edited by hand that no longer parses must be fixed or removed by hand; otherwise fix the setting the message names."
	}
	return "Apply again: the fragments are written one by one, each only when its content changes."
}

// classText is a change class as the plan and the documentation write it.
func classText(c slurm.ChangeClass) string {
	return "**" + c.String() + "**: " + c.Description()
}

// classDoc ends an attribute's description with the class of change it needs; the resource's
// description says what each class does.
func classDoc(c slurm.ChangeClass) string {
	return " Change class: **" + c.String() + "**."
}

// settingClassDoc ends an attribute's description with the change class a change of its
// Slurm setting needs, taken from the table slurm.Classify uses.
func settingClassDoc(doc, slurmKey string) string {
	return doc + classDoc(slurm.SettingClass(slurmKey))
}

// invalidSetting is the diagnostic for a value slurm.conf's syntax cannot hold, on the
// attribute the error names; attr maps a slurm.FieldError's field to the resource's attribute.
func invalidSetting(resource string, attr func(field string) path.Path, err error) diag.Diagnostic {
	p := path.Empty()
	var fe *slurm.FieldError
	if errors.As(err, &fe) {
		p = attr(fe.Field)
	}
	return settingError(p, "Invalid Slurm Setting", "A setting of "+resource+" cannot be written to slurm.conf",
		"Change the value the message names: values cannot hold whitespace or '#', extra cannot set what a typed attribute sets, "+
			"and times, memory sizes and states must be ones Slurm reads. No host was asked or changed.", err)
}

// unknownAtApply is the diagnostic for a value still unknown when Create or Update runs,
// which the framework should never hand over.
func unknownAtApply(resource string) diag.Diagnostic {
	return settingError(path.Empty(), "Unknown Slurm Setting", "A setting of "+resource+" is still unknown at apply",
		"This is a bug in the provider; please report it. Nothing was changed.", nil)
}

// mungeError is pitfall P10's diagnostic: slurmctld or slurmd must not start on a host where
// munged does not run.
func mungeError(node, daemon string, err error) diag.Diagnostic {
	return nodeError("MUNGE Does Not Run", node, "Before starting "+daemon+", a credential made with munge -n did not decode with unmunge",
		"munged must run with the cluster key before Slurm starts ("+slurm.PitfallRef("P10")+"): add depends_on = [gpucluster_munge_key.NAME] to this resource, "+
			"so the key is installed and munged restarted first. Nothing was changed.", err)
}

// daemonApplied fills what the resource that installs daemon (slurmctld or slurmd) on node
// learns at the end of its apply: the id is the node, the version what daemon -V reports, and
// the status in sync.
func daemonApplied(ctx context.Context, h transport.Executor, daemon string, node types.String, id, version, status *types.String) diag.Diagnostics {
	v, err := slurm.ReadVersion(ctx, h, daemon)
	if err != nil {
		title := "Cannot Read " + strings.ToUpper(daemon[:1]) + daemon[1:] + " Version"
		return diag.Diagnostics{nodeError(title, node.ValueString(), daemon+" -V failed", "", err)}
	}
	*id, *version, *status = node, types.StringValue(v.Original()), types.StringValue(inSync)
	return nil
}

// slurmController connects to the node that holds the fragments and runs slurmctld.
func (c *cluster) slurmController(ctx context.Context, node string) (*transport.Host, diag.Diagnostics) {
	var diags diag.Diagnostics
	h, err := c.host(ctx, node)
	if err != nil {
		diags.Append(connectError(node, err))
	}
	return h, diags
}

// writeSlurmFragments puts fragment changes on the controller through slurm.WriteFragments.
// Nothing else changes there: gpucluster_slurm_activation activates them all at once.
func (c *cluster) writeSlurmFragments(ctx context.Context, controller string, changes ...slurm.Fragment) diag.Diagnostics {
	h, diags := c.slurmController(ctx, controller)
	if diags.HasError() {
		return diags
	}
	if err := slurm.WriteFragments(ctx, h, changes...); err != nil {
		diags.Append(nodeError("Cannot Write Slurm Fragment", controller, "Writing the resource's fragment in "+slurm.FragmentDir+" failed", fragmentAdvice(err), err))
	}
	return diags
}

// planSlurmChange records, for the activation's plan, a fragment change planned on
// controller; nil is a change whose content is known only at apply.
func (c *cluster) planSlurmChange(controller string, f *slurm.Fragment) {
	switch {
	case c == nil:
	case f == nil:
		c.slurmPlans.unknownChange(controller)
	default:
		c.slurmPlans.change(controller, *f)
	}
}

// activationDoc is how a resource that writes a fragment says who activates it.
const activationDoc = "The resource only writes its fragment in `" + slurm.FragmentDir + "` on the controller; `gpucluster_slurm_activation`, which must depend on it, " +
	"assembles the files and restarts or reconfigures the daemons once per apply for all the changes together, and its plan says how."

// pitfallWarning is a pitfall check's finding that does not stop the change (P4, a setting the
// version table does not know); the finding itself says what to do.
func pitfallWarning(controller, finding string) diag.Diagnostic {
	return nodeWarning("Slurm Configuration Warning", controller, "Checking the Slurm configuration found a problem that does not stop the change", finding, nil)
}

// restartSlurmd is the second half of an ordered restart: slurmd restarts on every node that
// runs it, and the apply waits until the controller sees those nodes ready again. Running
// jobs survive: slurmstepd is not slurmd's child. Each node done is taken off the controller's
// list of pending restarts; a node that could not be reached or failed stays on it, so the
// next refresh reports it and the next apply retries.
func (c *cluster) restartSlurmd(ctx context.Context, controller *transport.Host, nodeNames []string, wait time.Duration) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(nodeNames) == 0 {
		return diags
	}
	restarted := make(chan string, len(nodeNames))
	failures := c.onEachNode(ctx, nodeNames, func(node string, h *transport.Host) error {
		done, err := slurm.RestartSlurmd(ctx, h)
		if done {
			restarted <- node
		}
		return err
	})
	close(restarted)
	failed := map[string]bool{}
	for _, f := range failures {
		failed[f.node] = true
		if f.connect {
			diags.Append(nodeWarning("Slurmd Not Restarted", f.node, "The node set or a setting every daemon reads at start changed, but the node could not be reached to restart slurmd",
				"The restart stays pending on the controller: the next plan shows it and the next apply retries once the node is up.", f.err))
			continue
		}
		diags.Append(nodeError("Cannot Restart Slurmd", f.node, "Restarting slurmd after an ordered restart failed",
			"Check journalctl -u slurmd there, then apply again: the restart stays pending on the controller.", f.err))
	}
	var done []string
	for _, node := range nodeNames {
		if !failed[node] {
			done = append(done, node)
		}
	}
	if err := slurm.ClearPendingRestart(ctx, controller, done); err != nil {
		diags.Append(nodeWarning("Pending Slurmd Restarts Not Cleared", controller.Name(), "Taking the restarted nodes off the list of pending slurmd restarts failed",
			"The next apply restarts slurmd there once more, which running jobs survive.", err))
	}
	for node := range restarted {
		if state, err := slurm.WaitNodeReady(ctx, controller, node, wait); err != nil {
			diags.Append(nodeWarning("Node Not Ready After Restart", node, fmt.Sprintf("slurmd restarted, but the controller does not see the node ready (last state %q)", state),
				"Check sudo scontrol show node "+node+" on the controller and journalctl -u slurmd there.", err))
		}
	}
	return diags
}

// previewSlurm runs the plan-time checks of a change on the controller: what the activation
// would refuse becomes an error on attr, its pitfall warnings become warnings. The class of
// change is the activation's to announce, once for all the changes of the apply. Nothing is
// checked while the provider's connection settings are not known yet.
func (c *cluster) previewSlurm(ctx context.Context, attr path.Path, controller, what string, changes ...slurm.Fragment) diag.Diagnostics {
	var diags diag.Diagnostics
	if c == nil || !c.settingsKnown() {
		return diags
	}
	h, err := c.host(ctx, controller)
	if err != nil {
		d := connectError(controller, err)
		diags.AddAttributeError(path.Root("controller"), d.Summary(), d.Detail())
		return diags
	}
	out, err := slurm.Preview(ctx, h, changes...)
	return previewDiags(attr, controller, what, out, err)
}

// previewDiags turns a preview into plan diagnostics: its refusal as an error on attr, its
// pitfall warnings as warnings.
func previewDiags(attr path.Path, controller, what string, out slurm.Outcome, err error) diag.Diagnostics {
	var diags diag.Diagnostics
	var undefined *slurm.UndefinedNodesError
	switch {
	case errors.As(err, &undefined):
		diags.Append(nodeAttributeError(attr, "Partition Names An Undefined Node", controller,
			"Checking "+what+" against the node definitions on the controller found a node no gpucluster_slurm_node defines ("+slurm.PitfallRef("P14")+")",
			"The plan stops here and no host is changed. If the node is defined in this configuration, refer to it as gpucluster_slurm_node.NAME.id instead of its name: "+
				"the check then waits until the node exists.", err))
		return diags
	case slurm.IsAccountingRequired(err):
		diags.Append(nodeAttributeError(attr, "GPU Accounting Needs Slurmdbd", controller,
			"Checking "+what+" against the controller's fragments found GPU or license TRES without slurmdbd accounting ("+slurm.PitfallRef("P2")+")",
			"The plan stops here and no host is changed. Add a gpucluster_slurm_accounting for this controller and set the TRES list as its tres.", err))
		return diags
	case err != nil:
		diags.Append(nodeAttributeError(attr, "Slurm Configuration Refused", controller,
			"Checking "+what+" against the controller's fragments and its Slurm version found a configuration Slurm would refuse or could not use",
			"The plan stops here and no host is changed. Fix the setting the message names.", err))
		return diags
	}
	for _, w := range out.Warnings {
		diags.Append(nodeAttributeWarning(attr, "Slurm Configuration Warning", controller,
			"Checking the Slurm configuration found a problem that does not stop the change", w, nil))
	}
	return diags
}

// extraValue is the state value of an extra map read back from a fragment, which does not
// tell "extra = {}" from no extra at all: without entries it keeps the form prior has, so
// neither the one nor the other shows a change at every plan.
func extraValue(prior types.Map, m map[string]string) types.Map {
	if len(m) == 0 && !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
		return prior
	}
	return stringMapValue(m)
}

// mapValue reads a map of strings; null and unknown give nil.
func mapValue(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	if len(out) == 0 {
		return nil
	}
	return out
}

// stringMapValue is the state value of an extra map: null when empty, so an unset attribute
// reads back unset.
func stringMapValue(m map[string]string) types.Map {
	if len(m) == 0 {
		return types.MapNull(types.StringType)
	}
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

// stringSetOrNull is a set that reads back null when empty.
func stringSetOrNull(values []string) types.Set {
	if len(values) == 0 {
		return types.SetNull(types.StringType)
	}
	sorted := append([]string(nil), values...)
	sort.Strings(sorted)
	return stringSet(sorted)
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func int64OrNull(n int64) types.Int64 {
	if n == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(n)
}

// readSlurmStatus reads the controller's fragments and files in one round trip.
func (c *cluster) readSlurmStatus(ctx context.Context, controller string) (slurm.Status, diag.Diagnostics) {
	h, diags := c.slurmController(ctx, controller)
	if diags.HasError() {
		return slurm.Status{}, diags
	}
	st, err := slurm.ReadStatus(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read Slurm Configuration", controller,
			"Reading the fragments in "+slurm.FragmentDir+" and the files in "+slurm.ConfDir+" failed",
			"A fragment edited by hand that no longer parses must be fixed or removed by hand.", err))
	}
	return st, diags
}

// removalGrace is how long the removal of a node waits by default for its jobs to end: enough
// for jobs that are completing (a cancelled job, say), not for jobs that run on.
const removalGrace = 30 * time.Second

// drainForRemoval drains node on the controller before it leaves the cluster and waits up to
// wait for its jobs to end; jobs still running are an error, and the node stays drained.
func (c *cluster) drainForRemoval(ctx context.Context, controller, node string, wait time.Duration) diag.Diagnostics {
	h, diags := c.slurmController(ctx, controller)
	if diags.HasError() {
		return diags
	}
	err := slurm.DrainForRemoval(ctx, h, node, wait)
	var running *slurm.JobsRunningError
	switch {
	case errors.As(err, &running):
		diags.Append(nodeError("Jobs Still Run On Node", node,
			fmt.Sprintf("The node is to leave the cluster, so it was drained on %s and no new job starts there; jobs running there did not end within %s", controller, wait),
			"Nothing else was changed, and the node stays drained. Wait until squeue -w "+node+" lists no job, or cancel them, then apply again; "+
				"or set timeouts { delete = \"2h\" } on gpucluster_slurm_compute to have destroy wait.", err))
	case err != nil:
		diags.Append(nodeError("Cannot Drain Node", node, "Draining the node on "+controller+" before its removal failed",
			"Nothing else was changed. Check sudo scontrol show node "+node+" there, then apply again.", err))
	}
	return diags
}
