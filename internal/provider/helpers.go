package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// clusterFrom unpacks what the provider's Configure handed over. Nil data means the provider
// is not configured yet (early validation), which is not an error.
func clusterFrom(data any, diags *diag.Diagnostics) *cluster {
	if data == nil {
		return nil
	}
	c, ok := data.(*cluster)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *cluster, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return c
}

func stringList(values []string) types.List {
	elems := make([]attr.Value, len(values))
	for i, v := range values {
		elems[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, elems)
}

func stringSet(values []string) types.Set {
	elems := make([]attr.Value, len(values))
	for i, v := range values {
		elems[i] = types.StringValue(v)
	}
	return types.SetValueMust(types.StringType, elems)
}

func markdownList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "`" + v + "`"
	}
	return strings.Join(quoted, ", ")
}

// timeoutsBlock is a timeouts block with create and update, both documented by doc, the block
// itself by summary, in Markdown like every other attribute.
func timeoutsBlock(ctx context.Context, summary, doc string) schema.Block {
	return timeoutsBlockWith(ctx, summary, doc, "")
}

// timeoutsBlockWith is timeoutsBlock with a delete timeout too, documented by deleteDoc, when
// deleteDoc is set.
func timeoutsBlockWith(ctx context.Context, summary, doc, deleteDoc string) schema.Block {
	block := timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: deleteDoc != ""})
	b, ok := block.(schema.SingleNestedBlock)
	if !ok {
		return block
	}
	b.MarkdownDescription = summary
	attrs := make(map[string]schema.Attribute, len(b.Attributes))
	for name, a := range b.Attributes {
		if s, ok := a.(schema.StringAttribute); ok {
			s.MarkdownDescription = doc
			if name == "delete" {
				s.MarkdownDescription = deleteDoc
			}
			a = s
		}
		attrs[name] = a
	}
	b.Attributes = attrs
	return b
}

// timeoutReader reads one operation's timeout from a timeouts block, or the default.
type timeoutReader func(timeouts.Value, context.Context, time.Duration) (time.Duration, diag.Diagnostics)

// The operations' timeouts, read as the timeouts library reads them, except that an unset
// timeout, the common case, is answered here: the library logs every default at INFO, which
// buried a run's own progress lines under one such line per resource.
var (
	createTimeout = quietTimeout("create", timeouts.Value.Create)
	updateTimeout = quietTimeout("update", timeouts.Value.Update)
	deleteTimeout = quietTimeout("delete", timeouts.Value.Delete)
)

func quietTimeout(name string, read timeoutReader) timeoutReader {
	return func(v timeouts.Value, ctx context.Context, def time.Duration) (time.Duration, diag.Diagnostics) {
		if v.IsNull() || v.IsUnknown() {
			return def, nil
		}
		if set, ok := v.Attributes()[name]; !ok || set.IsNull() || set.IsUnknown() {
			return def, nil
		}
		return read(v, ctx, def)
	}
}

// nullTimeouts is an unset timeouts block with create and update, for an import.
func nullTimeouts() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType, "update": types.StringType})}
}

// nullTimeoutsWithDelete is nullTimeouts for a block with a delete timeout too.
func nullTimeoutsWithDelete() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType, "update": types.StringType, "delete": types.StringType})}
}

func knownString(v types.String) string {
	if v.IsUnknown() || v.IsNull() {
		return ""
	}
	return v.ValueString()
}
