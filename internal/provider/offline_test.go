package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// An offline node is refused before any dial, by name or address, and the warning about it
// comes once per run however many resources meet it.
func TestOfflineNode(t *testing.T) {
	c := newCluster(settings{overrides: []nodeOverride{
		{name: "gpu01", address: "10.0.0.11"},
		{name: "gpu02", address: "10.0.0.12", offline: true},
	}})
	if !c.anyOffline() || !c.isOffline("gpu02") || !c.isOffline("10.0.0.12") || c.isOffline("gpu01") || c.isOffline("login01") {
		t.Fatal("offline marks read wrong")
	}
	if _, err := c.host(context.Background(), "10.0.0.12"); err == nil || !strings.Contains(err.Error(), "offline = true") {
		t.Errorf("host of an offline node: %v", err)
	}
	g := &offlineGuard{cluster: c}
	var first, second diag.Diagnostics
	g.warnOnce([]string{"gpu02"}, &first)
	g.warnOnce([]string{"10.0.0.12"}, &second)
	if first.WarningsCount() != 1 || second.WarningsCount() != 0 || !strings.Contains(first[0].Summary(), "Node gpu02 Is Offline") {
		t.Errorf("warnings: %v then %v, want one naming gpu02", first, second)
	}
	if newCluster(settings{}).anyOffline() {
		t.Error("a cluster without node blocks has an offline node")
	}
}

// A set of nodes other than `nodes` counts too: gpucluster_beegfs_management reaches each of its
// auth_nodes, so one of them offline keeps it from reading and planning there.
func TestOfflineGuardReadsEveryHostAttribute(t *testing.T) {
	ctx := context.Background()
	c := newCluster(settings{overrides: []nodeOverride{{name: "gpu07", offline: true}}})
	var g *offlineGuard
	for _, newResource := range (&gpuclusterProvider{}).Resources(ctx) {
		if r, ok := newResource().(*offlineGuard); ok {
			if owned, ok := r.inner.(*ownedGuard); ok {
				if _, isMgmt := owned.inner.(*beegfsManagementResource); isMgmt {
					g = r
				}
			}
		}
	}
	if g == nil {
		t.Fatal("gpucluster_beegfs_management is not guarded")
	}
	g.cluster = c
	var schemaResp resource.SchemaResponse
	g.Schema(ctx, resource.SchemaRequest{}, &schemaResp)
	state := tfsdk.State{Schema: schemaResp.Schema, Raw: tftypes.NewValue(schemaResp.Schema.Type().TerraformType(ctx), nil)}
	diags := state.SetAttribute(ctx, path.Root("node"), "login01")
	diags.Append(state.SetAttribute(ctx, path.Root("auth_nodes"), types.SetValueMust(types.StringType, []attr.Value{types.StringValue("gpu01"), types.StringValue("gpu07")}))...)
	offline, more := g.offlineIn(ctx, state)
	if diags = append(diags, more...); diags.HasError() {
		t.Fatal(diags)
	}
	if len(offline) != 1 || offline[0] != "gpu07" {
		t.Errorf("offline nodes %v, want gpu07 from auth_nodes", offline)
	}
}

// A list of nodes counts as a set does: gpucluster_rolling_reboot reaches each of its nodes.
func TestOfflineGuardReadsAListOfNodes(t *testing.T) {
	ctx := context.Background()
	var g *offlineGuard
	for _, newResource := range (&gpuclusterProvider{}).Resources(ctx) {
		if r, ok := newResource().(*offlineGuard); ok {
			inner := r.inner
			if owned, ok := inner.(*ownedGuard); ok {
				inner = owned.inner
			}
			if _, isRolling := inner.(*rollingRebootResource); isRolling {
				g = r
			}
		}
	}
	if g == nil {
		t.Fatal("gpucluster_rolling_reboot is not guarded")
	}
	g.cluster = newCluster(settings{overrides: []nodeOverride{{name: "gpu02", offline: true}}})
	var schemaResp resource.SchemaResponse
	g.Schema(ctx, resource.SchemaRequest{}, &schemaResp)
	state := tfsdk.State{Schema: schemaResp.Schema, Raw: tftypes.NewValue(schemaResp.Schema.Type().TerraformType(ctx), nil)}
	diags := state.SetAttribute(ctx, path.Root("controller"), "login01")
	diags.Append(state.SetAttribute(ctx, path.Root("nodes"), types.ListValueMust(types.StringType, []attr.Value{types.StringValue("gpu01"), types.StringValue("gpu02")}))...)
	offline, more := g.offlineIn(ctx, state)
	if diags = append(diags, more...); diags.HasError() {
		t.Fatal(diags)
	}
	if len(offline) != 1 || offline[0] != "gpu02" {
		t.Errorf("offline nodes %v, want gpu02 from nodes", offline)
	}
}
