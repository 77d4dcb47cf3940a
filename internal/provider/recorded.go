package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// recordedAttr is the computed attribute of the resources that a ledger on a host lists
// (gpucluster_firewall_rule in the node's ownership ledger, gpucluster_user and gpucluster_group
// in the UID ledger on the login node). Import only reads, because with import blocks it runs
// during the plan, so an imported resource is unrecorded until the apply after it writes the line.
const recordedAttr = "recorded"

// unrecorded tells a resource whose ledger line is missing: imported, or the line deleted by
// hand. State written before `recorded` existed has it null; those resources were recorded.
func unrecorded(recorded types.Bool) bool { return recorded.Equal(types.BoolValue(false)) }

// onlyRecordedDiffers tells an update whose plan differs from the state in recorded alone: the
// apply then writes the ledger line and nothing else.
func onlyRecordedDiffers(plan, state tftypes.Value) bool {
	var planned, prior map[string]tftypes.Value
	if plan.As(&planned) != nil || state.As(&prior) != nil || len(planned) != len(prior) {
		return false
	}
	for name, v := range planned {
		if name != recordedAttr && !v.Equal(prior[name]) {
			return false
		}
	}
	return true
}
