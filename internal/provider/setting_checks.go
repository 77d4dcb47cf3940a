package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// settingCheck refuses a string setting at validation, before any node is asked, with the
// house diagnostic. A value not known yet is checked at the plan that knows it.
type settingCheck struct {
	attr                    string
	value                   types.String
	check                   func(string) error
	summary, happened, todo string
}

// refuseSettings reports every check that refuses its known value.
func refuseSettings(checks ...settingCheck) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, c := range checks {
		if c.value.IsNull() || c.value.IsUnknown() {
			continue
		}
		if err := c.check(c.value.ValueString()); err != nil {
			diags.Append(settingError(path.Root(c.attr), c.summary, c.happened, c.todo, err))
		}
	}
	return diags
}

// validateModel is ValidateConfig for checks that need nothing but the configuration.
func validateModel[M any](ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse, check func(M) diag.Diagnostics) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(check(m)...)
	}
}
