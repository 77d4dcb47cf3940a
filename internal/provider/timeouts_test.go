package provider

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// An unset timeout is the default without a log line: a plan at TF_LOG=info shows the run's
// own progress, not one "timeout configuration not found" per resource. A set one is read.
func TestTimeoutsAreReadWithoutLogNoise(t *testing.T) {
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &logs)
	attrTypes := map[string]attr.Type{"create": types.StringType, "update": types.StringType}
	partly := timeouts.Value{Object: types.ObjectValueMust(attrTypes, map[string]attr.Value{
		"create": types.StringValue("7m"), "update": types.StringNull(),
	})}
	cases := []struct {
		name  string
		read  timeoutReader
		value timeouts.Value
		want  time.Duration
	}{
		{"block unset", createTimeout, nullTimeouts(), time.Minute},
		{"create set", createTimeout, partly, 7 * time.Minute},
		{"update unset", updateTimeout, partly, time.Minute},
		{"no delete in the block", deleteTimeout, partly, time.Minute},
	}
	for _, c := range cases {
		got, diags := c.read(c.value, ctx, time.Minute)
		if diags.HasError() || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, diags, c.want)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("reading timeouts logged:\n%s", logs.String())
	}
	// The library itself logs the default, which is what quietTimeout spares the log.
	if _, _ = partly.Update(ctx, time.Minute); logs.Len() == 0 {
		t.Error("the timeouts library no longer logs a default: quietTimeout may go")
	}
}
