package provider

import (
	"context"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// NewServer is the provider's protocol server: the framework's, with the context of every
// request that reaches the nodes labelled with what it does (transport.WithActivity), so work
// it cut short is reported as "Connection To gpu01 Lost While Creating alice" or "Apply
// Interrupted" by whichever resource's step it cut.
func NewServer(version string) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer {
		return &activityServer{ProviderServer: providerserver.NewProtocol6(New(version)())()}
	}
}

// activityServer labels requests; every other call goes to the framework's server unchanged.
type activityServer struct {
	tfprotov6.ProviderServer

	typesOnce sync.Once
	types     map[string]tftypes.Type
}

func (s *activityServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	prior, priorOK := s.value(ctx, req.TypeName, req.PriorState)
	planned, plannedOK := s.value(ctx, req.TypeName, req.PlannedState)
	verb, state := "Applying", req.PlannedState
	switch {
	case priorOK && prior.IsNull():
		verb = "Creating"
	case plannedOK && planned.IsNull():
		verb, state = "Deleting", req.PriorState
	case priorOK && plannedOK:
		verb = "Updating"
	}
	return s.ProviderServer.ApplyResourceChange(s.label(ctx, verb, req.TypeName, state), req)
}

func (s *activityServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	state := req.ProposedNewState
	if v, ok := s.value(ctx, req.TypeName, state); ok && v.IsNull() {
		state = req.PriorState
	}
	return s.ProviderServer.PlanResourceChange(s.label(ctx, "Planning", req.TypeName, state), req)
}

func (s *activityServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return s.ProviderServer.ReadResource(s.label(ctx, "Reading", req.TypeName, req.CurrentState), req)
}

func (s *activityServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	ctx = transport.WithActivity(ctx, transport.Activity{Verb: "Importing", Object: req.ID})
	return s.ProviderServer.ImportResourceState(ctx, req)
}

func (s *activityServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return s.ProviderServer.ReadDataSource(transport.WithActivity(ctx, transport.Activity{Verb: "Reading", Object: kindOf(req.TypeName)}), req)
}

// label names the object by its name attribute, or by its kind for a resource without one (a
// firewall, a Slurm controller), whose node the diagnostic names anyway.
func (s *activityServer) label(ctx context.Context, verb, typeName string, state *tfprotov6.DynamicValue) context.Context {
	object := kindOf(typeName)
	if name, ok := s.stringAttr(ctx, typeName, state, "name"); ok {
		object = name
	}
	return transport.WithActivity(ctx, transport.Activity{Verb: verb, Object: object})
}

func kindOf(typeName string) string {
	return strings.ReplaceAll(strings.TrimPrefix(typeName, "gpucluster_"), "_", " ")
}

func (s *activityServer) value(ctx context.Context, typeName string, dv *tfprotov6.DynamicValue) (tftypes.Value, bool) {
	s.typesOnce.Do(func() { s.types = s.resourceTypes(ctx) })
	typ, ok := s.types[typeName]
	if !ok || dv == nil {
		return tftypes.Value{}, false
	}
	v, err := dv.Unmarshal(typ)
	return v, err == nil
}

func (s *activityServer) stringAttr(ctx context.Context, typeName string, dv *tfprotov6.DynamicValue, name string) (string, bool) {
	v, ok := s.value(ctx, typeName, dv)
	if !ok || v.IsNull() {
		return "", false
	}
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		return "", false
	}
	var str string
	if a, ok := attrs[name]; !ok || !a.IsKnown() || a.IsNull() || a.As(&str) != nil {
		return "", false
	}
	return str, true
}

// resourceTypes are the state types of the resources, from the schema Terraform also gets.
func (s *activityServer) resourceTypes(ctx context.Context) map[string]tftypes.Type {
	types := map[string]tftypes.Type{}
	resp, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || resp == nil {
		return types
	}
	for name, schema := range resp.ResourceSchemas {
		types[name] = schema.ValueType()
	}
	return types
}
