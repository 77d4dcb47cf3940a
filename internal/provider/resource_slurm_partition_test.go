package provider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// The plan-time diagnostics a preview turns into, without a host: P4 is a warning on the
// partition's nodes, P14 an error that says how to refer to nodes created in the same apply,
// and a disruptive activation a warning naming what restarts, once, on the activation.
func TestSlurmPlanDiagnostics(t *testing.T) {
	settings := slurm.DefaultControllerSettings("login01")
	nodes := []slurm.NodeDef{{Name: "gpu01", Gres: "gpu:4"}, {Name: "gpu02", Gres: "gpu:4"}}
	noDefault := slurm.PartitionDef{Name: "gpu", Nodes: []string{"gpu01", "gpu02"}}
	p4 := slurm.CheckDefMemPerGPU(noDefault, nodes, settings)
	p14 := slurm.CheckPartitionNodes(slurm.PartitionDef{Name: "gpu", Nodes: []string{"gpu01", "gpu09"}}, nodes)
	tests := []struct {
		name     string
		diags    diag.Diagnostics
		severity diag.Severity
		summary  string
		detail   []string
	}{
		{"P4", previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{Warnings: []string{p4}}, nil),
			diag.SeverityWarning, "Slurm Configuration Warning", []string{"partition gpu", "sets no DefMemPerGPU", "first one-GPU job then blocks every other job"}},
		{"P14", previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{}, &slurm.RefusedError{Err: p14}),
			diag.SeverityError, "Partition Names An Undefined Node", []string{"on node login01.", "gpu09, which no node definition defines", "gpucluster_slurm_node.NAME.id", "no host is changed", "Original Error: partition gpu names gpu09"}},
		{"other refusal", previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{}, errors.New("setting X is unknown to Slurm 24.11.5")),
			diag.SeverityError, "Slurm Configuration Refused", []string{"on node login01.", "no host is changed", "Original Error: setting X is unknown to Slurm 24.11.5"}},
		{"ordered restart", activationWarnings("login01", slurm.Outcome{Classification: slurm.Classification{
			Class: slurm.OrderedRestart, Reasons: []string{"node gpu03 added, removed or changed"}, RestartNodes: []string{"gpu01", "gpu02", "gpu03"}}, CurrentSHA256: "a"}, 1),
			diag.SeverityWarning, "Ordered Restart Of Slurm", []string{"node gpu03 added", "1 change(s) known only at apply", "slurmd on gpu[01-03] (where it runs) restarts, once for all changes", "Running jobs survive"}},
		{"restart", activationWarnings("login01", slurm.Outcome{Classification: slurm.Classification{
			Class: slurm.RestartController, Reasons: []string{"SlurmctldPort changed"}}, CurrentSHA256: "a"}, 0),
			diag.SeverityWarning, "Slurmctld Will Restart", []string{"restarts slurmctld once (SlurmctldPort changed)"}},
		{"pending slurmd restart", activationWarnings("login01", slurm.Outcome{Classification: slurm.Classification{
			Reasons: []string{"slurmd restart still due on gpu01 since an earlier ordered restart"}, RestartNodes: []string{"gpu01"}}, CurrentSHA256: "a"}, 0),
			diag.SeverityWarning, "Slurmd Will Restart", []string{"restarts slurmd on gpu01", "still due on gpu01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.diags) != 1 {
				t.Fatalf("want one diagnostic, got %v", tt.diags)
			}
			d := tt.diags[0]
			if d.Severity() != tt.severity || d.Summary() != tt.summary {
				t.Errorf("got %v %q, want %v %q", d.Severity(), d.Summary(), tt.severity, tt.summary)
			}
			detail := strings.Join(strings.Fields(d.Detail()), " ")
			for _, want := range tt.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail lacks %q:\n%s", want, detail)
				}
			}
		})
	}
	if got := activationWarnings("login01", slurm.Outcome{Classification: slurm.Classification{Class: slurm.Reconfigure}, CurrentSHA256: "a"}, 0); len(got) != 0 {
		t.Errorf("a reconfigure needs no warning: %v", got)
	}
	first := slurm.Outcome{Classification: slurm.Classification{Class: slurm.RestartController, Reasons: []string{"slurm.conf is new", slurm.NotRunningReason}}}
	if got := activationWarnings("login01", first, 0); len(got) != 0 {
		t.Errorf("slurmctld's first start is no restart to warn about: %v", got)
	}
}

// Every Slurm resource's schema passes the framework's own checks, and each settings
// attribute names the class of change it needs.
func TestSlurmSchemas(t *testing.T) {
	ctx := context.Background()
	for _, newResource := range []func() guardedResource{NewSlurmControllerResource, NewSlurmNodeResource, NewSlurmPartitionResource, NewSlurmComputeResource,
		NewSlurmActivationResource} {
		var resp resource.SchemaResponse
		newResource().Schema(ctx, resource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatalf("%T: %v", newResource(), resp.Diagnostics)
		}
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%T: %v", newResource(), diags)
		}
		// A wait the user can set documents its default on the resource's page.
		if b, ok := resp.Schema.Blocks["timeouts"]; ok {
			attrs := b.GetNestedObject().GetAttributes()
			if _, ok := attrs["create"]; !ok || attrs["update"] == nil {
				t.Errorf("%T: timeouts has %v, want create and update", newResource(), attrs)
			}
			for name, a := range attrs {
				want := "Defaults to `2m0s`"
				if name == "delete" {
					// Destroy waits only for jobs that are ending, unless told to wait longer.
					want = "Defaults to `30s`"
				}
				if !strings.Contains(a.GetMarkdownDescription(), want) {
					t.Errorf("%T: timeouts.%s: %q", newResource(), name, a.GetMarkdownDescription())
				}
			}
		}
	}
	var resp resource.SchemaResponse
	NewSlurmControllerResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	for name, want := range map[string]slurm.ChangeClass{"scheduler_type": slurm.Reconfigure, "slurmctld_port": slurm.RestartController, "select_type": slurm.RestartController,
		"slurmd_port": slurm.OrderedRestart} {
		if doc := resp.Schema.Attributes[name].GetMarkdownDescription(); !strings.Contains(doc, "Change class: **"+want.String()+"**.") {
			t.Errorf("%s: description does not name %q: %s", name, want, doc)
		}
	}
}

// The extra attribute's documentation lists every setting of the tables Classify uses.
func TestSlurmControllerExtraDoc(t *testing.T) {
	var resp resource.SchemaResponse
	NewSlurmControllerResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	doc := resp.Schema.Attributes["extra"].GetMarkdownDescription()
	for _, class := range []slurm.ChangeClass{slurm.RestartController, slurm.OrderedRestart} {
		for _, key := range slurm.SettingsOfClass(class) {
			if !strings.Contains(doc, "`"+key+"`") {
				t.Errorf("extra's description does not list %s (%v)", key, class)
			}
		}
	}
}

// A failed activation's advice follows what happened on the controller, never claiming
// nothing changed when the rollback failed.
func TestSlurmActivationAdvice(t *testing.T) {
	cause := errors.New("systemctl restart slurmctld: exit 1")
	tests := []struct {
		name      string
		err       error
		want, not string
	}{
		{"refused", &slurm.RefusedError{Err: errors.New("bad")}, "Nothing was activated", "restored"},
		{"P14", &slurm.RefusedError{Err: &slurm.UndefinedNodesError{Partition: "gpu", Nodes: []string{"gpu09"}}}, "depend on every gpucluster_slurm_node", "restored"},
		{"rolled back", &slurm.ActivationError{Cause: cause, WasActive: true}, "previous files were restored and slurmctld runs with them again", "Nothing was activated"},
		{"rollback failed", &slurm.ActivationError{Cause: cause, RestoreErr: errors.New("write failed")}, "Restoring the previous files failed too", "Nothing was"},
		{"other", errors.New("connection lost"), "may be partly written", "Nothing was"},
	}
	for _, tt := range tests {
		advice := slurmActivationAdvice(tt.err)
		if !strings.Contains(advice, tt.want) || strings.Contains(advice, tt.not) {
			t.Errorf("%s: %q, want %q and not %q", tt.name, advice, tt.want, tt.not)
		}
	}
}

// A refused value lands on the attribute that holds it, told apart by the error's type.
func TestInvalidSettingPath(t *testing.T) {
	gpuFiles := slurm.NodeDef{Name: "gpu01", GPUFiles: "/dev/nvidia 0"}.Validate()
	nodeExtra := slurm.NodeDef{Name: "gpu01", Extra: map[string]string{"RealMemory": "1"}}.Validate()
	c := slurm.DefaultControllerSettings("login01")
	c.Cgroup.Extra = map[string]string{"ConstrainCores": "no"}
	cgroupExtra := c.Validate()
	c = slurm.DefaultControllerSettings("login01")
	c.SchedulerType = "a b"
	scheduler := c.Validate()
	tests := []struct {
		d    diag.Diagnostic
		want path.Path
	}{
		{invalidSetting(slurmNodeResourceName, nodeAttr, gpuFiles), path.Root("gpu_files")},
		{invalidSetting(slurmNodeResourceName, nodeAttr, nodeExtra), path.Root("extra")},
		{invalidSetting(slurmControllerResourceName, controllerAttr, cgroupExtra), path.Root("cgroup").AtName("extra")},
		{invalidSetting(slurmControllerResourceName, controllerAttr, scheduler), path.Root("scheduler_type")},
		{invalidSetting(slurmPartitionResourceName, partitionAttr, slurm.PartitionDef{Name: "gpu", AllowGroups: []string{"a,b"}}.Validate()), path.Root("allow_groups")},
	}
	for _, tt := range tests {
		wp, ok := tt.d.(diag.DiagnosticWithPath)
		if !ok || !wp.Path().Equal(tt.want) {
			t.Errorf("%q: path %v, want %v", tt.d.Detail(), wp, tt.want)
		}
		if !strings.Contains(tt.d.Detail(), "Original Error: ") {
			t.Errorf("no original error: %q", tt.d.Detail())
		}
	}
}

// extra = {} reads back as {}, and an unset extra as null: neither shows a change at every plan.
func TestExtraValueKeepsForm(t *testing.T) {
	empty := types.MapValueMust(types.StringType, map[string]attr.Value{})
	if got := extraValue(empty, nil); !got.Equal(empty) {
		t.Errorf("{} read back as %v", got)
	}
	if got := extraValue(types.MapNull(types.StringType), nil); !got.IsNull() {
		t.Errorf("null read back as %v", got)
	}
	if got := extraValue(empty, map[string]string{"A": "b"}); len(got.Elements()) != 1 {
		t.Errorf("a setting added by hand is not read: %v", got)
	}
	var m slurmControllerModel
	m.Extra = empty
	m.Cgroup = cgroupObjectExtra(slurm.DefaultCgroupSettings(), empty)
	m.setSettings(slurm.DefaultControllerSettings("login01"))
	if !m.Extra.Equal(empty) || !m.Cgroup.Attributes()["extra"].Equal(empty) {
		t.Errorf("controller: extra %v, cgroup %v", m.Extra, m.Cgroup)
	}
}
