package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// recordingResource records the activity each request reaches it with.
type recordingResource struct {
	typeName string
	named    bool
	got      []transport.Activity
}

func (r *recordingResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.typeName
}

func (r *recordingResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{"node": schema.StringAttribute{Optional: true}}
	if r.named {
		attrs["name"] = schema.StringAttribute{Optional: true}
	}
	resp.Schema = schema.Schema{Attributes: attrs}
}

func (r *recordingResource) note(ctx context.Context) {
	r.got = append(r.got, transport.ActivityOf(ctx))
}

func (r *recordingResource) Configure(context.Context, resource.ConfigureRequest, *resource.ConfigureResponse) {
}

func (r *recordingResource) ImportState(ctx context.Context, _ resource.ImportStateRequest, _ *resource.ImportStateResponse) {
	r.note(ctx)
}

func (r *recordingResource) Create(ctx context.Context, _ resource.CreateRequest, _ *resource.CreateResponse) {
	r.note(ctx)
}
func (r *recordingResource) Read(ctx context.Context, _ resource.ReadRequest, _ *resource.ReadResponse) {
	r.note(ctx)
}
func (r *recordingResource) Update(ctx context.Context, _ resource.UpdateRequest, _ *resource.UpdateResponse) {
	r.note(ctx)
}
func (r *recordingResource) Delete(ctx context.Context, _ resource.DeleteRequest, _ *resource.DeleteResponse) {
	r.note(ctx)
}

// Every request that reaches a resource through its guard says what it does and to which object,
// so work it cut short can be reported as "Connection To gpu01 Lost While Creating alice".
func TestGuardLabelsRequestsWithTheirActivity(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		typeName string
		named    bool
		object   string
	}{{"user", true, "alice"}, {"firewall", false, "firewall"}, {"slurm_controller", false, "slurm controller"}} {
		rec := &recordingResource{typeName: tc.typeName, named: tc.named}
		g := &offlineGuard{wrapper: wrapper{rec}, cluster: newCluster(settings{})}
		var sr resource.SchemaResponse
		g.Schema(ctx, resource.SchemaRequest{}, &sr)
		typ := sr.Schema.Type().TerraformType(ctx)
		values := map[string]tftypes.Value{"node": tftypes.NewValue(tftypes.String, "gpu01")}
		if tc.named {
			values["name"] = tftypes.NewValue(tftypes.String, "alice")
		}
		state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, values)}
		plan := tfsdk.Plan(state)
		g.Create(ctx, resource.CreateRequest{Plan: plan}, &resource.CreateResponse{})
		g.Read(ctx, resource.ReadRequest{State: state}, &resource.ReadResponse{})
		g.Update(ctx, resource.UpdateRequest{Plan: plan, State: state}, &resource.UpdateResponse{})
		g.Delete(ctx, resource.DeleteRequest{State: state}, &resource.DeleteResponse{})
		want := []string{"Creating", "Reading", "Updating", "Deleting"}
		if len(rec.got) != len(want) {
			t.Fatalf("%s: got %v, want one activity per request", tc.typeName, rec.got)
		}
		for i, verb := range want {
			if rec.got[i] != (transport.Activity{Verb: verb, Object: tc.object}) {
				t.Errorf("%s request %d: got %+v, want %s %s", tc.typeName, i, rec.got[i], verb, tc.object)
			}
		}
	}
}
