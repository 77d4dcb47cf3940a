package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// slurmNamePattern is what slurm accepts as a node or partition name: safe as a file name and
// in a hostlist.
var slurmNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// slurmApplyTodo is the advice for a failed slurm.Apply: its error already says whether the
// previous files were restored and quotes slurmctld's log.
const slurmApplyTodo = "Nothing was left half-written: either the new files were refused before any change, or the previous " +
	"files were restored. Fix the setting the message or slurmctld's log names, then apply again."

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

// slurmController connects to the node that holds the fragments and runs slurmctld.
func (c *cluster) slurmController(ctx context.Context, node string) (*transport.Host, diag.Diagnostics) {
	var diags diag.Diagnostics
	h, err := c.host(ctx, node)
	if err != nil {
		diags.Append(connectError(node, err))
	}
	return h, diags
}

// applySlurm writes fragment changes on the controller through slurm.Apply, restarts slurmd
// where an ordered restart asks for it, and turns the pitfall warnings into diagnostics.
// todo replaces the general advice when not empty.
func (c *cluster) applySlurm(ctx context.Context, controller, todo string, changes ...slurm.Fragment) (slurm.Outcome, diag.Diagnostics) {
	h, diags := c.slurmController(ctx, controller)
	if diags.HasError() {
		return slurm.Outcome{}, diags
	}
	out, err := slurm.Apply(ctx, h, changes...)
	if err != nil {
		diags.Append(nodeError("Cannot Apply Slurm Configuration", controller,
			"Assembling, validating or activating "+slurm.ConfDir+"/slurm.conf failed", firstNonEmpty(todo, slurmApplyTodo), err))
		return out, diags
	}
	for _, w := range out.Warnings {
		diags.AddWarning("Slurm Configuration Warning", w)
	}
	diags.Append(c.restartSlurmd(ctx, h, out.RestartNodes)...)
	return out, diags
}

// restartSlurmdScript restarts slurmd only where it runs: a node that is not set up yet
// fetches the new configuration when its slurmd first starts.
const restartSlurmdScript = transport.ScriptEnv + `if systemctl is-active --quiet slurmd; then systemctl restart slurmd && echo restarted; fi`

// restartSlurmd is the second half of an ordered restart: slurmd restarts on every node that
// runs it, and the apply waits until the controller sees those nodes ready again. Running
// jobs survive: slurmstepd is not slurmd's child.
func (c *cluster) restartSlurmd(ctx context.Context, controller *transport.Host, nodeNames []string) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(nodeNames) == 0 {
		return diags
	}
	restarted := make(chan string, len(nodeNames))
	failures := c.onEachNode(ctx, nodeNames, func(node string, h *transport.Host) error {
		res, err := h.Sudo(ctx, restartSlurmdScript, nil)
		if err == nil && strings.TrimSpace(string(res.Stdout)) == "restarted" {
			restarted <- node
		}
		return err
	})
	close(restarted)
	for _, f := range failures {
		if f.connect {
			diags.AddWarning("Slurmd Not Restarted",
				fmt.Sprintf("The node set changed, but node %s could not be reached to restart slurmd. It fetches the new configuration "+
					"when slurmd next starts there: restart it by hand (systemctl restart slurmd) once the node is up.\n\nOriginal Error: %v", f.node, f.err))
			continue
		}
		diags.Append(nodeError("Cannot Restart Slurmd", f.node, "Restarting slurmd after the node set changed failed",
			"Check journalctl -u slurmd there, then restart it by hand or apply again.", f.err))
	}
	for node := range restarted {
		if state, err := slurm.WaitNodeReady(ctx, controller, node, slurm.NodeWaitTimeout); err != nil {
			diags.AddWarning("Node Not Ready After Restart",
				fmt.Sprintf("slurmd restarted on %s, but the controller does not see it ready (last state %q). "+
					"Check sinfo -a -N and journalctl -u slurmd there.\n\nOriginal Error: %v", node, state, err))
		}
	}
	return diags
}

// previewSlurm runs the plan-time checks of a change on the controller: what slurm.Apply
// would refuse becomes an error on attr, its pitfall warnings and a disruptive change class
// become warnings. ran is false, without diagnostics, while the provider's connection
// settings are not known yet.
func (c *cluster) previewSlurm(ctx context.Context, attr path.Path, controller, what string, changes ...slurm.Fragment) (out slurm.Outcome, ran bool, diags diag.Diagnostics) {
	if c == nil || !c.canReachHosts() {
		return slurm.Outcome{}, false, diags
	}
	h, err := c.host(ctx, controller)
	if err != nil {
		d := connectError(controller, err)
		diags.AddAttributeError(path.Root("controller"), d.Summary(), d.Detail())
		return slurm.Outcome{}, false, diags
	}
	out, err = slurm.Preview(ctx, h, changes...)
	return out, true, previewDiags(attr, controller, what, out, err)
}

// classWarning tells, in the plan, that a change restarts daemons: a restart of slurmctld or
// an ordered restart, naming what restarts.
func classWarning(diags *diag.Diagnostics, what string, out slurm.Outcome) {
	switch out.Class {
	case slurm.RestartController:
		diags.AddWarning("Slurmctld Will Restart",
			fmt.Sprintf("Applying %s restarts slurmctld (%s). %s", what, strings.Join(out.Reasons, ", "), slurm.RestartController.Description()))
	case slurm.OrderedRestart:
		restarts := "slurmd on every compute node that runs it"
		if len(out.RestartNodes) > 0 {
			restarts = "slurmd on " + slurm.CompressHostlist(out.RestartNodes) + " (where it runs)"
		}
		diags.AddWarning("Ordered Restart Of Slurm",
			fmt.Sprintf("Applying %s is an ordered restart (%s): slurmctld stops, the files are written, slurmctld starts, then %s restarts. %s",
				what, strings.Join(out.Reasons, ", "), restarts, slurm.OrderedRestart.Description()))
	}
}

// previewDiags turns a preview into plan diagnostics: its refusal as an error on attr, its
// pitfall warnings as warnings, and the class of a disruptive change as a warning.
func previewDiags(attr path.Path, controller, what string, out slurm.Outcome, err error) diag.Diagnostics {
	var diags diag.Diagnostics
	if err != nil {
		diags.AddAttributeError(attr, "Slurm Configuration Refused",
			fmt.Sprintf("With this change the controller %s would refuse the Slurm configuration, so the plan stops here and no host is changed.\n\n%v", controller, err))
		return diags
	}
	for _, w := range out.Warnings {
		diags.AddAttributeWarning(attr, "Slurm Configuration Warning", w)
	}
	classWarning(&diags, what, out)
	return diags
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

// parseNameAtController splits an import ID NAME@CONTROLLER.
func parseNameAtController(id, example string) (name, controller string, diags diag.Diagnostics) {
	name, controller, ok := strings.Cut(id, "@")
	if !ok || name == "" || !nodeRefPattern.MatchString(controller) || !slurmNamePattern.MatchString(name) {
		diags.AddError("Invalid Import ID",
			fmt.Sprintf("Expected NAME@CONTROLLER, the name and the controller node that holds its fragment (for example %q); got %q.", example, id))
	}
	return name, controller, diags
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
