package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// A firewall's rules and slurm_controller live only in the configuration. An import reads them
// from the node in the one form the docs give, so that the configuration of a firewall found
// running (every rule of the node in rules, ssh_rule unset) plans empty: Terraform plans a
// change for any configured value the imported state lacks.

// importedRuleIDs lists every rule on the node, as rules holds them.
func importedRuleIDs(node string, rules []firewall.Rule) types.Set {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = firewall.ID(node, r)
	}
	slices.Sort(ids)
	return stringSet(ids)
}

// importedSlurmController names the node itself when it runs slurmctld, else the controller
// slurmd takes its configuration from (--conf-server in /etc/default/slurmd), else null.
func importedSlurmController(ctx context.Context, h *transport.Host, node string) (types.String, diag.Diagnostics) {
	roles, err := nodes.Roles(ctx, h)
	if err != nil {
		return types.StringNull(), diag.Diagnostics{nodeError("Cannot Import Firewall", node, "Reading whether slurmctld is enabled failed", adviceRead, err)}
	}
	if slices.Contains(roles, "controller") {
		return types.StringValue(node), nil
	}
	content, exists, err := h.ReadFile(ctx, slurm.SlurmdDefaultsPath)
	if err != nil {
		return types.StringNull(), diag.Diagnostics{nodeError("Cannot Import Firewall", node, "Reading "+slurm.SlurmdDefaultsPath+" failed", adviceRead, err)}
	}
	if !exists {
		return types.StringNull(), nil
	}
	controller, _, err := slurm.ParseSlurmdDefaults(content)
	if err != nil {
		// slurmd finds its controller another way (DNS SRV, a local slurm.conf): none to name.
		return types.StringNull(), nil
	}
	return types.StringValue(controller), nil
}
