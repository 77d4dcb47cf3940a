package provider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// The plan-time diagnostics a preview turns into, without a host: P4 is a warning on the
// partition's nodes, P14 an error that says how to refer to nodes created in the same apply,
// and a disruptive class a warning naming what restarts.
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
		{"P4", partitionPlanDiags(previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{Warnings: []string{p4}}, nil)),
			diag.SeverityWarning, "Slurm Configuration Warning", []string{"partition gpu", "sets no DefMemPerGPU", "first one-GPU job then blocks every other job"}},
		{"P14", partitionPlanDiags(previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{}, p14)),
			diag.SeverityError, "Partition Names An Undefined Node", []string{"gpu09, which no node definition defines", "gpucluster_slurm_node.NAME.id", "no host is changed"}},
		{"other refusal", partitionPlanDiags(previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{}, errors.New("setting X is unknown to Slurm 24.11.5"))),
			diag.SeverityError, "Slurm Configuration Refused", []string{"unknown to Slurm 24.11.5"}},
		{"ordered restart", previewDiags(path.Root("name"), "login01", "node gpu03", slurm.Outcome{Classification: slurm.Classification{
			Class: slurm.OrderedRestart, Reasons: []string{"node gpu03 added, removed or changed"}, RestartNodes: []string{"gpu01", "gpu02", "gpu03"}}}, nil),
			diag.SeverityWarning, "Ordered Restart Of Slurm", []string{"node gpu03 added", "slurmd on gpu[01-03] (where it runs) restarts", "Running jobs survive"}},
		{"restart", previewDiags(path.Root("extra"), "login01", "this controller change", slurm.Outcome{Classification: slurm.Classification{
			Class: slurm.RestartController, Reasons: []string{"SlurmctldPort changed"}}}, nil),
			diag.SeverityWarning, "Slurmctld Will Restart", []string{"restarts slurmctld (SlurmctldPort changed)"}},
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
	if got := previewDiags(path.Root("nodes"), "login01", "partition gpu", slurm.Outcome{Classification: slurm.Classification{Class: slurm.Reconfigure}}, nil); len(got) != 0 {
		t.Errorf("a reconfigure needs no warning: %v", got)
	}
}

// Every Slurm resource's schema passes the framework's own checks, and each settings
// attribute names the class of change it needs.
func TestSlurmSchemas(t *testing.T) {
	ctx := context.Background()
	for _, newResource := range []func() resource.Resource{NewSlurmControllerResource, NewSlurmNodeResource, NewSlurmPartitionResource, NewSlurmComputeResource} {
		var resp resource.SchemaResponse
		newResource().Schema(ctx, resource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatalf("%T: %v", newResource(), resp.Diagnostics)
		}
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%T: %v", newResource(), diags)
		}
	}
	var resp resource.SchemaResponse
	NewSlurmControllerResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	for name, want := range map[string]slurm.ChangeClass{"scheduler_type": slurm.Reconfigure, "slurmctld_port": slurm.RestartController, "select_type": slurm.RestartController} {
		if doc := resp.Schema.Attributes[name].GetMarkdownDescription(); !strings.Contains(doc, "Change class: **"+want.String()+"**.") {
			t.Errorf("%s: description does not name %q: %s", name, want, doc)
		}
	}
}
