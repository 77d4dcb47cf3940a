package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// adminGroupBlock is the sudo group (GID 27 on Debian) with the given allow settings.
func adminGroupBlock(allow string) string {
	return fmt.Sprintf("resource \"gpucluster_group\" \"test\" {\n  name             = \"sudo\"\n  gid              = 27\n  nodes            = [\"login01\"]\n  allow_system_gid = true\n%s}\n", allow)
}

// TestGroupAllowAdminGroupsRenamed shows allow_admin_groups, the name gpucluster_user uses, and
// its earlier name allow_admin_group, which keeps its meaning: either one lets the plan manage
// an administrator group and sets both in the plan, neither is refused, and the two set to
// different values are refused naming both.
func TestGroupAllowAdminGroupsRenamed(t *testing.T) {
	bothPlanned := func(want bool) tfresource.ConfigPlanChecks {
		return tfresource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("allow_admin_groups"), knownvalue.Bool(want)),
			plancheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("allow_admin_group"), knownvalue.Bool(want)),
		}}
	}
	for name, allow := range map[string]string{
		"new name":         "  allow_admin_groups = true\n",
		"deprecated name":  "  allow_admin_group = true\n",
		"both, same value": "  allow_admin_groups = true\n  allow_admin_group  = true\n",
	} {
		t.Run(name, func(t *testing.T) {
			tfresource.UnitTest(t, tfresource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []tfresource.TestStep{{
					Config: unknownConnectionProvider + adminGroupBlock(allow), PlanOnly: true, ExpectNonEmptyPlan: true,
					ConfigPlanChecks: bothPlanned(true),
				}},
			})
		})
	}
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"neither name": {adminGroupBlock(""), `(?s)Administrator Group Not Allowed.*allow_admin_groups = true`},
		"deprecated name false": {adminGroupBlock("  allow_admin_group = false\n"),
			`(?s)Administrator Group Not Allowed.*allow_admin_groups = true`},
		"conflicting values": {adminGroupBlock("  allow_admin_groups = true\n  allow_admin_group  = false\n"),
			diagPattern("Conflicting Attributes", "allow_admin_groups = true", "allow_admin_groups = true and allow_admin_group = false", "Remove allow_admin_group").String()},
	})
}

// TestRenamedAttributesDeprecated checks that each earlier name carries a deprecation message
// naming the current one, which Terraform shows as a warning wherever a configuration sets it.
func TestRenamedAttributesDeprecated(t *testing.T) {
	var resp resource.SchemaResponse
	NewGroupResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	old, ok := resp.Schema.Attributes["allow_admin_group"].(schema.BoolAttribute)
	if !ok || !strings.Contains(old.DeprecationMessage, "Use allow_admin_groups instead") {
		t.Errorf("allow_admin_group: want a deprecation message naming allow_admin_groups, got %+v", resp.Schema.Attributes["allow_admin_group"])
	}
	if cur, ok := resp.Schema.Attributes["allow_admin_groups"].(schema.BoolAttribute); !ok || cur.DeprecationMessage != "" {
		t.Errorf("allow_admin_groups: want a current attribute, got %+v", resp.Schema.Attributes["allow_admin_groups"])
	}
	var ds datasource.SchemaResponse
	NewClusterCheckDataSource().Schema(context.Background(), datasource.SchemaRequest{}, &ds)
	states, ok := ds.Schema.Attributes["node_states"].(dsschema.MapAttribute)
	if !ok || !strings.Contains(states.DeprecationMessage, "Use node_status instead") {
		t.Errorf("node_states: want a deprecation message naming node_status, got %+v", ds.Schema.Attributes["node_states"])
	}
	if _, ok := ds.Schema.Attributes["node_status"].(dsschema.MapAttribute); !ok {
		t.Error("gpucluster_cluster_check has no node_status")
	}
}

// validateGroup runs the provider's own validation of a gpucluster_group configuration with
// the given attributes set, as Terraform does before a plan, and returns its diagnostics.
func validateGroup(t *testing.T, set map[string]tftypes.Value) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	server := providerserver.NewProtocol6(New("test")())()
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ, ok := schemas.ResourceSchemas["gpucluster_group"].ValueType().(tftypes.Object)
	if !ok {
		t.Fatal("gpucluster_group's schema is not an object")
	}
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		values[name] = v
	}
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, values))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "gpucluster_group", Config: &config})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// TestGroupDeprecatedNameWarns shows the warning a configuration that sets allow_admin_group
// gets, naming allow_admin_groups, and none for the current name.
func TestGroupDeprecatedNameWarns(t *testing.T) {
	base := map[string]tftypes.Value{
		"name":             tftypes.NewValue(tftypes.String, "sudo"),
		"gid":              tftypes.NewValue(tftypes.Number, 27),
		"nodes":            tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, []tftypes.Value{tftypes.NewValue(tftypes.String, "login01")}),
		"allow_system_gid": tftypes.NewValue(tftypes.Bool, true),
	}
	with := func(attr string) map[string]tftypes.Value {
		m := maps.Clone(base)
		m[attr] = tftypes.NewValue(tftypes.Bool, true)
		return m
	}
	var warned []string
	for _, d := range validateGroup(t, with("allow_admin_group")) {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Errorf("allow_admin_group = true refused: %s: %s", d.Summary, d.Detail)
		}
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && strings.Contains(d.Detail, "Use allow_admin_groups instead") {
			warned = append(warned, d.Summary)
		}
	}
	if !slices.Equal(warned, []string{"Attribute Deprecated"}) {
		t.Errorf("allow_admin_group = true: want one deprecation warning naming allow_admin_groups, got %v", warned)
	}
	if diags := validateGroup(t, with("allow_admin_groups")); len(diags) != 0 {
		t.Errorf("allow_admin_groups = true: want no diagnostics, got %v", diags)
	}
}

// TestRenamedBoolReadBack shows a state written before the rename, which holds only the old
// name, read back with the setting under the current name too, so the first plan after an
// upgrade changes nothing.
func TestRenamedBoolReadBack(t *testing.T) {
	for _, tc := range []struct{ current, old, want types.Bool }{
		{types.BoolNull(), types.BoolValue(true), types.BoolValue(true)},
		{types.BoolNull(), types.BoolValue(false), types.BoolValue(false)},
		{types.BoolValue(false), types.BoolValue(false), types.BoolValue(false)},
		{types.BoolValue(true), types.BoolValue(true), types.BoolValue(true)},
	} {
		if got := groupAllowAdmin.readBack(tc.current, tc.old); !got.Equal(tc.want) {
			t.Errorf("readBack(%v, %v) = %v, want %v", tc.current, tc.old, got, tc.want)
		}
	}
}
