package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// resourceInterfaces are the framework's optional interfaces of a resource, each with whether r
// implements it. Terraform calls only what the value the provider returns implements.
var resourceInterfaces = map[string]func(r resource.Resource) bool{
	"ResourceWithConfigure":        func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithConfigure); return ok },
	"ResourceWithConfigValidators": func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithConfigValidators); return ok },
	"ResourceWithImportState":      func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithImportState); return ok },
	"ResourceWithModifyPlan":       func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithModifyPlan); return ok },
	"ResourceWithMoveState":        func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithMoveState); return ok },
	"ResourceWithUpgradeState":     func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithUpgradeState); return ok },
	"ResourceWithValidateConfig":   func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithValidateConfig); return ok },
	"ResourceWithIdentity":         func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithIdentity); return ok },
	"ResourceWithUpgradeIdentity":  func(r resource.Resource) bool { _, ok := r.(resource.ResourceWithUpgradeIdentity); return ok },
}

// unguarded is the resource inside r's guards.
func unguarded(r resource.Resource) resource.Resource {
	for {
		switch g := r.(type) {
		case *offlineGuard:
			r = g.inner
		case *ownedGuard:
			r = g.inner
		default:
			return r
		}
	}
}

// validatedResource is a resource with a config validator, which no resource has yet.
type validatedResource struct{ recordingResource }

func (r *validatedResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{noValidator{}}
}

type noValidator struct{}

func (noValidator) Description(context.Context) string         { return "nothing" }
func (noValidator) MarkdownDescription(context.Context) string { return "nothing" }
func (noValidator) ValidateResource(context.Context, resource.ValidateConfigRequest, *resource.ValidateConfigResponse) {
}

// Every resource reaches Terraform through its guards: each framework interface a resource
// implements must still be implemented by what the provider returns, or Terraform never calls
// it. A resource that gains one the guards do not forward yet fails here, not silently.
func TestGuardsPassOnEveryInterface(t *testing.T) {
	ctx := context.Background()
	factories := (&gpuclusterProvider{}).Resources(ctx)
	validated := &validatedResource{recordingResource{typeName: "user", named: true}}
	factories = append(factories, guardOffline(guardOwned(func() guardedResource { return validated }, recordedOnLoginNode("user")), "nodes"))
	for _, f := range factories {
		outer := f()
		inner := unguarded(outer)
		name := fmt.Sprintf("%T", inner)
		for iface, implements := range resourceInterfaces {
			if implements(inner) && !implements(outer) {
				t.Errorf("%s implements %s, which its guards do not pass on to Terraform: forward it in wrapper.go", name, iface)
			}
		}
	}
	outer := factories[len(factories)-1]()
	if v, ok := outer.(resource.ResourceWithConfigValidators); !ok || len(v.ConfigValidators(ctx)) != 1 {
		t.Error("a resource's config validator does not reach Terraform through its guards")
	}
}
