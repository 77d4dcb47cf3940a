package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestSettingDefault(t *testing.T) {
	tests := []struct {
		name          string
		config, state types.String
		want          types.String
	}{
		{"unset at create", types.StringNull(), types.StringNull(), types.StringValue("/bin/true")},
		{"unset, the provider's default in place", types.StringNull(), types.StringValue("/bin/true"), types.StringValue("/bin/true")},
		{"unset, the line left out (adopted)", types.StringNull(), types.StringValue(""), types.StringValue("")},
		{"unset after another value", types.StringNull(), types.StringValue("/usr/bin/mail"), types.StringValue("/bin/true")},
		{"set", types.StringValue("/usr/bin/mail"), types.StringValue(""), types.StringValue("/usr/bin/mail")},
		{"set empty", types.StringValue(""), types.StringValue("/bin/true"), types.StringValue("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := planmodifier.StringRequest{ConfigValue: tt.config, StateValue: tt.state, PlanValue: tt.config}
			resp := &planmodifier.StringResponse{PlanValue: req.PlanValue}
			settingDefault("/bin/true").PlanModifyString(context.Background(), req, resp)
			if !resp.PlanValue.Equal(tt.want) {
				t.Errorf("plan %s, want %s", resp.PlanValue, tt.want)
			}
		})
	}
}
