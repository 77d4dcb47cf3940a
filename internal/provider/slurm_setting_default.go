package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// settingDefault is a controller setting's default, as a plan modifier and not a schema
// Default: unset, the setting is the provider's default, except where the controller's
// slurm.conf leaves its line out (state ""), where it stays out. A hand-written slurm.conf
// imports so, and `terraform plan -generate-config-out` writes an empty setting as null: with a
// schema Default, the adopted cluster's first plan would add the line.
type settingDefault string

var _ planmodifier.String = settingDefault("")

func (d settingDefault) Description(context.Context) string {
	return "defaults to " + string(d) + " unless slurm.conf leaves the line out"
}

func (d settingDefault) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (d settingDefault) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if leftOut := !req.StateValue.IsNull() && !req.StateValue.IsUnknown() && req.StateValue.ValueString() == ""; leftOut {
		resp.PlanValue = types.StringValue("")
		return
	}
	resp.PlanValue = types.StringValue(string(d))
}
