package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// expectBefore checks the refreshed prior state that a plan starts from, which is where a
// hand-made change shows up; the built-in checks only look at planned values.
func expectBefore(address, attr, key, want string) plancheck.PlanCheck {
	return beforeCheck{address: address, attr: attr, key: key, want: want}
}

type beforeCheck struct{ address, attr, key, want string }

func (c beforeCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		before, ok := rc.Change.Before.(map[string]any)
		if !ok {
			resp.Error = fmt.Errorf("%s: no prior state in the plan", c.address)
			return
		}
		entries, ok := before[c.attr].(map[string]any)
		if !ok {
			resp.Error = fmt.Errorf("%s: prior state has no map %s", c.address, c.attr)
			return
		}
		if got := entries[c.key]; got != c.want {
			resp.Error = fmt.Errorf("%s: prior %s[%q] = %v, want %q", c.address, c.attr, c.key, got, c.want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s: not in the plan", c.address)
}
