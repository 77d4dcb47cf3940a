package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestPlanInstalledVersions(t *testing.T) {
	const a, b = "0.5.16-1", "0.5.16-1+gpucluster1"
	nodes := []string{"gpu01", "login01"}
	atA := versionMap(map[string]string{"gpu01": a, "login01": a})
	tests := []struct {
		name      string
		pin       types.String
		prior     types.Map
		sameNodes bool
		want      types.Map
		warning   string // in the one warning's detail, "" for none
		err       string // in the one error's detail, "" for none
	}{
		{"unpinned, same nodes: the state's versions", types.StringNull(), atA, true, atA, "", ""},
		{"unpinned, a node added: unknown", types.StringNull(), atA, false, types.MapUnknown(types.StringType), "", ""},
		{"unpinned, a node without MUNGE: unknown", types.StringNull(), versionMap(map[string]string{"login01": a}), true, types.MapUnknown(types.StringType), "", ""},
		{"pinned at the installed version: no warning", types.StringValue(a), atA, true, atA, "", ""},
		{"pinned newer: every node, warned", types.StringValue(b), atA, true, versionMap(map[string]string{"gpu01": b, "login01": b}), "MUNGE goes to " + b + " on gpu01 from " + a + ", login01 from " + a, ""},
		{"pinned on a new node: no warning", types.StringValue(a), types.MapNull(types.StringType), false, atA, "", ""},
		{"pinned older than one node's: refused there", types.StringValue("0.5.15-1"), versionMap(map[string]string{"gpu01": a, "login01": "0.5.14-1"}), true,
			versionMap(map[string]string{"login01": "0.5.15-1"}), "MUNGE goes to 0.5.15-1 on login01 from 0.5.14-1", "munge_version asks for 0.5.15-1 where " + a + " is installed; nothing was changed on node gpu01"},
		{"pin unknown: unknown", types.StringUnknown(), atA, true, types.MapUnknown(types.StringType), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var diags diag.Diagnostics
			got := mungePackages.planInstalledVersions(nodes, tt.pin, tt.prior, tt.sameNodes, &diags)
			if !got.Equal(tt.want) {
				t.Errorf("planned %v, want %v", got, tt.want)
			}
			checkOneDiagnostic(t, diags.Warnings(), tt.warning)
			checkOneDiagnostic(t, diags.Errors(), tt.err)
		})
	}
}

func TestPlannedVersion(t *testing.T) {
	p := beegfsPackages("beegfs-meta", "beegfs-meta")
	var diags diag.Diagnostics
	if _, ok := p.plannedVersion("login01", types.StringNull(), "8.4.0-1", &diags); ok || diags.HasError() {
		t.Errorf("no pin: planned %v, diagnostics %v; want nothing", ok, diags)
	}
	v, ok := p.plannedVersion("login01", types.StringValue("8.4.1-1"), "8.4.0-1", &diags)
	if !ok || v.ValueString() != "8.4.1-1" {
		t.Errorf("upgrade: planned %v %v, want 8.4.1-1", v, ok)
	}
	checkOneDiagnostic(t, diags.Warnings(), "BeeGFS goes to 8.4.1-1 on login01 from 8.4.0-1")
	diags = nil
	if _, ok := p.plannedVersion("login01", types.StringValue("8.3.0-1"), "8.4.0-1", &diags); ok {
		t.Error("downgrade planned")
	}
	checkOneDiagnostic(t, diags.Errors(), "beegfs_version asks for 8.3.0-1 where 8.4.0-1 is installed")
	if d := diags.Errors(); len(d) == 1 {
		withPath, ok := d[0].(diag.DiagnosticWithPath)
		if d[0].Summary() != "BeeGFS Downgrade Refused" || !ok || !withPath.Path().Equal(path.Root("beegfs_version")) {
			t.Errorf("the refusal is %q, not BeeGFS Downgrade Refused naming beegfs_version", d[0].Summary())
		}
	}
}

// checkOneDiagnostic wants exactly one diagnostic whose detail holds want, or none for "".
func checkOneDiagnostic(t *testing.T, got diag.Diagnostics, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) != 0:
		t.Errorf("unexpected diagnostics %v", got)
	case want != "" && (len(got) != 1 || !strings.Contains(got[0].Detail(), want)):
		t.Errorf("diagnostics %v, want one saying %q", got, want)
	}
}
