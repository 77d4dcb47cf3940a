package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
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

// CloseConnections, which main calls when Terraform stops the plugin, closes the pool of every
// configured provider instance, so each host's run summary is logged before the process ends.
func TestCloseConnectionsClosesEveryConfiguredPool(t *testing.T) {
	var pools []*transport.Pool
	for range 2 {
		resp := configureWith(t, tftypes.NewValue(tftypes.String, "10.0.0.12"))
		c, ok := resp.ResourceData.(*cluster)
		if !ok {
			t.Fatalf("Configure gave %T, want *cluster", resp.ResourceData)
		}
		pools = append(pools, c.pool)
	}
	CloseConnections()
	cfg := transport.Config{Name: "gpu02", Address: "127.0.0.1", User: "admin", InsecureIgnoreHostKey: true, PrivateKey: []byte("unused")}
	for i, pool := range pools {
		if _, err := pool.Host(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "pool is closed") {
			t.Errorf("provider instance %d: connecting after CloseConnections gave %v, want the pool closed", i, err)
		}
	}
}
