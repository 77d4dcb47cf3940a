package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// labelled tells the transport what a request does to which object, so that work it cuts short
// is reported as "Connection To gpu01 Lost While Creating alice" by whichever step it cut. The
// object is named by its name attribute, or by its kind for a resource without one (a firewall,
// a Slurm controller), whose node the diagnostic names anyway.
func (w wrapper) labelled(ctx context.Context, verb string, data tfsdk.State) context.Context {
	var meta resource.MetadataResponse
	w.inner.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "gpucluster"}, &meta)
	object := kindOf(meta.TypeName)
	if name, ok := nameIn(ctx, data); ok {
		object = name
	}
	return transport.WithActivity(ctx, transport.Activity{Verb: verb, Object: object})
}

func nameIn(ctx context.Context, data tfsdk.State) (string, bool) {
	if data.Raw.IsNull() {
		return "", false
	}
	if _, d := data.Schema.TypeAtPath(ctx, path.Root("name")); d.HasError() {
		return "", false
	}
	var name types.String
	if data.GetAttribute(ctx, path.Root("name"), &name).HasError() || name.IsNull() || name.IsUnknown() {
		return "", false
	}
	return name.ValueString(), true
}

func kindOf(typeName string) string {
	return strings.ReplaceAll(strings.TrimPrefix(typeName, "gpucluster_"), "_", " ")
}

// readingDataSource labels a data source's read, as labelled does a resource's requests.
func readingDataSource(ctx context.Context, kind string) context.Context {
	return transport.WithActivity(ctx, transport.Activity{Verb: "Reading", Object: kind})
}
