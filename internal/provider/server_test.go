package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// recordingServer answers the schema as the provider does and records the activity of the
// requests that reach the resources.
type recordingServer struct {
	tfprotov6.ProviderServer
	got []transport.Activity
}

func (r *recordingServer) ApplyResourceChange(ctx context.Context, _ *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	r.got = append(r.got, transport.ActivityOf(ctx))
	return &tfprotov6.ApplyResourceChangeResponse{}, nil
}

func (r *recordingServer) ReadResource(ctx context.Context, _ *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r.got = append(r.got, transport.ActivityOf(ctx))
	return &tfprotov6.ReadResourceResponse{}, nil
}

// Each request that reaches the nodes says what it does and to which object, so work it cut
// short can be reported as "Connection To gpu01 Lost While Creating alice".
func TestRequestsAreLabelledWithTheirActivity(t *testing.T) {
	rec := &recordingServer{ProviderServer: NewServer("test")()}
	s := &activityServer{ProviderServer: rec}
	ctx := context.Background()
	schema, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	state := func(typeName, name string) *tfprotov6.DynamicValue {
		typ := schema.ResourceSchemas[typeName].ValueType()
		var v tftypes.Value
		if name == "" {
			v = tftypes.NewValue(typ, nil)
		} else {
			obj, ok := typ.(tftypes.Object)
			if !ok {
				t.Fatalf("%s: state type %s is not an object", typeName, typ)
			}
			attrs := map[string]tftypes.Value{}
			for k, at := range obj.AttributeTypes {
				attrs[k] = tftypes.NewValue(at, nil)
			}
			if _, ok := attrs["name"]; ok {
				attrs["name"] = tftypes.NewValue(tftypes.String, name)
			}
			v = tftypes.NewValue(typ, attrs)
		}
		dv, err := tfprotov6.NewDynamicValue(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	apply := func(typeName, prior, planned string) {
		if _, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: typeName, PriorState: state(typeName, prior), PlannedState: state(typeName, planned)}); err != nil {
			t.Fatal(err)
		}
	}
	apply("gpucluster_user", "", "alice")
	apply("gpucluster_user", "alice", "alice")
	apply("gpucluster_group", "gpu", "")
	apply("gpucluster_firewall", "", "x")
	// A request whose states cannot be read is still an apply.
	if _, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: "gpucluster_nosuch", PriorState: &tfprotov6.DynamicValue{}, PlannedState: &tfprotov6.DynamicValue{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: "gpucluster_slurm_partition", CurrentState: state("gpucluster_slurm_partition", "gpu")}); err != nil {
		t.Fatal(err)
	}
	want := []transport.Activity{{Verb: "Creating", Object: "alice"}, {Verb: "Updating", Object: "alice"}, {Verb: "Deleting", Object: "gpu"},
		{Verb: "Creating", Object: "firewall"}, {Verb: "Applying", Object: "nosuch"}, {Verb: "Reading", Object: "gpu"}}
	if len(rec.got) != len(want) {
		t.Fatalf("got %v, want %v", rec.got, want)
	}
	for i := range want {
		if rec.got[i] != want[i] {
			t.Errorf("request %d: got %+v, want %+v", i, rec.got[i], want[i])
		}
	}
}
