package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// configureWith configures the provider with every setting null but one node block, gpu02,
// whose address is addr.
func configureWith(t *testing.T, addr tftypes.Value) *provider.ConfigureResponse {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	var schemaResp provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &schemaResp)
	objType, ok := schemaResp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatal("the provider schema is not an object")
	}
	values := map[string]tftypes.Value{}
	for name, typ := range objType.AttributeTypes {
		values[name] = tftypes.NewValue(typ, nil)
	}
	listType, ok := objType.AttributeTypes["node"].(tftypes.List)
	if !ok {
		t.Fatal("node is not a list block")
	}
	nodeType, ok := listType.ElementType.(tftypes.Object)
	if !ok {
		t.Fatal("a node block is not an object")
	}
	node := map[string]tftypes.Value{}
	for name, typ := range nodeType.AttributeTypes {
		node[name] = tftypes.NewValue(typ, nil)
	}
	node["name"] = tftypes.NewValue(tftypes.String, "gpu02")
	node["address"] = addr
	values["node"] = tftypes.NewValue(listType, []tftypes.Value{tftypes.NewValue(nodeType, node)})
	values["private_key"] = tftypes.NewValue(tftypes.String, "unused")
	resp := &provider.ConfigureResponse{}
	p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: schemaResp.Schema, Raw: tftypes.NewValue(objType, values)}}, resp)
	return resp
}

// A node address known only at apply gives one warning that names it and lists every deferred
// check; a known address gives none.
func TestConfigureWarnsOnceAboutDeferredChecks(t *testing.T) {
	resp := configureWith(t, tftypes.NewValue(tftypes.String, tftypes.UnknownValue))
	if resp.Diagnostics.HasError() || len(resp.Diagnostics) != 1 {
		t.Fatalf("diagnostics %v, want exactly one warning", resp.Diagnostics)
	}
	d := resp.Diagnostics[0]
	if d.Summary() != "Node Checks Deferred To Apply" || !strings.Contains(d.Detail(), "node[0].address") {
		t.Errorf("warning %q: %q, want the deferred checks and node[0].address named", d.Summary(), d.Detail())
	}
	for _, check := range []string{"UID and GID reuse", "firewall lockout", "RealMemory", "DefMemPerGPU", "restart class"} {
		if !strings.Contains(d.Detail(), check) {
			t.Errorf("the warning does not list %q", check)
		}
	}
	if known := configureWith(t, tftypes.NewValue(tftypes.String, "10.0.0.12")); len(known.Diagnostics) != 0 {
		t.Errorf("a known address gave %v, want no diagnostics", known.Diagnostics)
	}
}
