package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// renamedBool is an optional bool whose name changed: the old name keeps working with a
// deprecation warning, so a configuration written for it keeps its meaning, and the two names
// set to different values are refused rather than one silently winning.
type renamedBool struct {
	name, oldName string
}

// attribute is the current name's attribute. Neither name has a default: a default would make
// an unset name look set, and the plan takes the one value from whichever the configuration sets.
func (r renamedBool) attribute(doc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: doc + " Defaults to `false`.", Optional: true, Computed: true}
}

// oldAttribute is the earlier name's attribute, deprecated.
func (r renamedBool) oldAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{
		MarkdownDescription: fmt.Sprintf("Deprecated: the same setting as `%s`, under its earlier name.", r.name),
		DeprecationMessage:  fmt.Sprintf("Use %s instead: %s is its earlier name, kept so that existing configurations keep working.", r.name, r.oldName),
		Optional:            true,
		Computed:            true,
	}
}

// value is the setting a configuration gives under either name: unknown while either is, false
// when neither is set.
func (r renamedBool) value(current, old types.Bool) types.Bool {
	switch {
	case current.IsUnknown() || old.IsUnknown():
		return types.BoolUnknown()
	case !current.IsNull():
		return current
	case !old.IsNull():
		return old
	}
	return types.BoolValue(false)
}

// readBack fills the current name in a state written before the rename, which has only the
// old one, so the upgrade plans no change.
func (r renamedBool) readBack(current, old types.Bool) types.Bool {
	if current.IsNull() {
		return old
	}
	return current
}

// validate refuses the two names set to different values.
func (r renamedBool) validate(current, old types.Bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if current.IsNull() || current.IsUnknown() || old.IsNull() || old.IsUnknown() || current.Equal(old) {
		return diags
	}
	diags.Append(settingError(path.Root(r.name), "Conflicting Attributes",
		fmt.Sprintf("%s = %t and %s = %t set one setting to two values: %s is the deprecated name of %s", r.name, current.ValueBool(), r.oldName, old.ValueBool(), r.oldName, r.name),
		fmt.Sprintf("Remove %s and keep %s. No host was asked or changed.", r.oldName, r.name), nil))
	return diags
}

// plan sets both names to the configuration's value, so the state holds one setting under both.
func (r renamedBool) plan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) types.Bool {
	var current, old types.Bool
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(r.name), &current)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(r.oldName), &old)...)
	v := r.value(current, old)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(r.name), v)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(r.oldName), v)...)
	return v
}
