package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// wrapper passes to the resource it wraps the calls that a guard (offlineGuard, ownedGuard)
// leaves as they are.
type wrapper struct {
	inner resource.Resource
}

func (w wrapper) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	w.inner.Metadata(ctx, req, resp)
}

func (w wrapper) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	w.inner.Schema(ctx, req, resp)
}

func (w wrapper) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if r, ok := w.inner.(resource.ResourceWithValidateConfig); ok {
		r.ValidateConfig(ctx, req, resp)
	}
}

// configure hands the provider's data to the wrapped resource and returns the cluster.
func (w wrapper) configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) *cluster {
	if r, ok := w.inner.(resource.ResourceWithConfigure); ok {
		r.Configure(ctx, req, resp)
	}
	return clusterFrom(req.ProviderData, &resp.Diagnostics)
}
