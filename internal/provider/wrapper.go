package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// guardedResource is what the guards (offlineGuard, ownedGuard) wrap: every resource of the
// provider takes the provider's data and can be imported.
type guardedResource interface {
	resource.ResourceWithConfigure
	resource.ResourceWithImportState
}

// wrapper passes to the resource it wraps the calls that a guard leaves as they are. A guard is
// what Terraform sees of a resource, so it implements each of the framework's interfaces a
// resource implements and forwards it: TestGuardsPassOnEveryInterface lists them.
type wrapper struct {
	inner guardedResource
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

func (w wrapper) ConfigValidators(ctx context.Context) []resource.ConfigValidator {
	if r, ok := w.inner.(resource.ResourceWithConfigValidators); ok {
		return r.ConfigValidators(ctx)
	}
	return nil
}

// configure hands the provider's data to the wrapped resource and returns the cluster.
func (w wrapper) configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) *cluster {
	w.inner.Configure(ctx, req, resp)
	return clusterFrom(req.ProviderData, &resp.Diagnostics)
}
