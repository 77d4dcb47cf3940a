package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// deferredChecks are the plan-time checks that need an answer from a node. While a connection
// setting is unknown the plan cannot ask, so each runs in its resource's final plan during
// apply, before that resource changes any node: Terraform plans every resource again with the
// now known settings right before applying it.
var deferredChecks = []string{
	"UID and GID reuse against the login node's ledger, and accounts already on the nodes (gpucluster_user, gpucluster_group)",
	"firewall lockout of the provider's own SSH connection, rule ownership, and the Slurm traffic warnings (gpucluster_firewall, gpucluster_firewall_rule)",
	"RealMemory and the other node facts against what the node reports (gpucluster_slurm_node, gpucluster_node)",
	"DefMemPerGPU and the other slurm.conf checks on the controller (gpucluster_slurm_controller, gpucluster_slurm_node, gpucluster_slurm_partition)",
	"the restart class of the Slurm changes and the restarts they need (gpucluster_slurm_activation)",
	"MUNGE key state on the nodes (gpucluster_munge_key)",
	"MariaDB accounts the provider did not create (gpucluster_slurm_accounting), and accounts and Unix accounts of Slurm users (gpucluster_slurm_user)",
	"BeeGFS filesystems, interlock, IDs on disk and existing data (gpucluster_beegfs_management, gpucluster_beegfs_metadata, gpucluster_beegfs_target)",
}

// unknownSettings names the provider settings whose values are not known until apply.
func unknownSettings(m providerModel) []string {
	var names []string
	top := []struct {
		name  string
		value attr.Value
	}{
		{"user", m.User}, {"port", m.Port}, {"private_key", m.PrivateKey}, {"private_key_file", m.PrivateKeyFile},
		{"private_key_passphrase", m.PrivateKeyPassphrase}, {"use_agent", m.UseAgent}, {"known_hosts_file", m.KnownHostsFile},
		{"host_keys", m.HostKeys}, {"accept_new_host_keys", m.AcceptNewHostKeys}, {"login_node", m.LoginNode},
		{"jump_host", m.JumpHost}, {"sudo_exe", m.SudoExe}, {"sudo_password", m.SudoPassword},
	}
	for _, s := range top {
		if s.value.IsUnknown() || s.name == "host_keys" && hostKeysUnknown(m.HostKeys) {
			names = append(names, s.name)
		}
	}
	for i, n := range m.Nodes {
		for _, s := range []struct {
			name  string
			value attr.Value
		}{{"name", n.Name}, {"address", n.Address}, {"port", n.Port}, {"user", n.User}, {"jump_host", n.JumpHost}, {"offline", n.Offline}} {
			if s.value.IsUnknown() {
				names = append(names, fmt.Sprintf("node[%d].%s", i, s.name))
			}
		}
	}
	return names
}

// deferredChecksWarning tells, once per plan, which checks wait for apply and why.
func deferredChecksWarning(unknown []string) diag.Diagnostic {
	return diag.NewWarningDiagnostic("Node Checks Deferred To Apply",
		fmt.Sprintf("The provider settings %s are known only after apply (they come from other resources, for example nodes another module creates), "+
			"so this plan could not ask any node. These checks run during apply instead, each before its resource changes a node:\n\n- %s\n\n"+
			"A change this plan shows may still be refused then. To see them at plan time, apply the resources the settings come from first "+
			"(terraform apply -target=...), then plan again.",
			strings.Join(unknown, ", "), strings.Join(deferredChecks, "\n- ")))
}

// hostKeysUnknown reports host_keys not known yet: keys of machines another module creates are
// known at apply, one element at a time.
func hostKeysUnknown(keys types.List) bool {
	return keys.IsUnknown() || slices.ContainsFunc(keys.Elements(), attr.Value.IsUnknown)
}
