package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// firewallsOn is the example's shape: rules and firewalls expanded over the servers, each
// firewall listing its node's rules. Taking a server out of servers removes its instances.
// count rather than the example's for_each: the test framework's state checks cannot index
// instances by string.
func firewallsOn(l *lab.Lab, servers ...string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
locals {
  servers = [%s]
}

resource "gpucluster_firewall_rule" "ssh" {
  count    = length(local.servers)
  node     = local.servers[count.index]
  port     = "22"
  from     = "10.0.0.10"
  comment  = "SSH from login node"
}

resource "gpucluster_firewall_rule" "slurmd" {
  count    = length(local.servers)
  node     = local.servers[count.index]
  port     = "6818"
  from     = "10.0.0.0/24"
  comment  = "slurmd"
}

resource "gpucluster_firewall" "node" {
  count    = length(local.servers)
  node     = local.servers[count.index]
  rules    = [gpucluster_firewall_rule.ssh[count.index].id, gpucluster_firewall_rule.slurmd[count.index].id]
}
`, strings.Join(quoted(servers), ", "))
}

// Removing a server's firewall with its rules in one apply, as taking a GPU server out of the
// example's gpu_servers does. Terraform plans the rules' removals before the firewall that
// lists them, and each alone would leave UFW filtering without the SSH rule; but the apply
// destroys the firewall first, which turns UFW off. The plan was refused as a lockout before:
// the rules' checks now wait for the firewall's plan on a node it manages.
func TestAccFirewall_removedWithItsRules(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu01"
	keys := []string{"allow:22/tcp:from=10.0.0.10", "allow:6818/tcp:from=10.0.0.0/24"}
	var ufwFiles string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, keys...),
		Steps: []resource.TestStep{
			{
				Config: firewallsOn(l, node),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWStatus(l, node, "Status: active"),
					checkOnHost(l, node, "cat "+firewall.ManagedPath, "# UFW on this node is managed by a gpucluster_firewall resource. Managed by Terraform."),
				),
			},
			{
				// The marker deleted by hand, or never written (an import, an earlier version):
				// the plan shows recorded going true, and the apply writes the marker and nothing else.
				PreConfig: func() {
					onHost(t, l, node, "rm "+firewall.ManagedPath)
					ufwFiles = snapshotFirewalls(t, l)
				},
				Config: firewallsOn(l, node),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_firewall.node[0]", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gpucluster_firewall.node[0]", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, node, "test -e "+firewall.ManagedPath+" && echo marked", "marked"),
					func(*terraform.State) error {
						if after := snapshotFirewalls(t, l); after != ufwFiles {
							return fmt.Errorf("writing the marker changed UFW's files:\nbefore:\n%s\nafter:\n%s", ufwFiles, after)
						}
						return nil
					},
				),
			},
			{
				// The SSH rule alone goes while the firewall stays: still refused, by the
				// firewall's plan, where UFW keeps filtering.
				Config:      withoutSSHRules(firewallsOn(l, node)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*gpu01.*deleting allow:22/tcp:from=10\.0\.0\.10`),
			},
			{
				Config: firewallsOn(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(`gpucluster_firewall.node[0]`, plancheck.ResourceActionDestroy),
						plancheck.ExpectResourceAction(`gpucluster_firewall_rule.ssh[0]`, plancheck.ResourceActionDestroy),
					},
				},
				Check: checkFirewallClean(l, node, keys...),
			},
		},
	})
}

// withoutSSHRules drops the SSH rules' resource, the firewalls still listing the rule by its id.
func withoutSSHRules(config string) string {
	start := strings.Index(config, `resource "gpucluster_firewall_rule" "ssh" {`)
	end := start + strings.Index(config[start:], "}\n") + 2
	config = config[:start] + config[end:]
	return strings.Replace(config, "gpucluster_firewall_rule.ssh[count.index].id", `"${local.servers[count.index]}:allow:22/tcp:from=10.0.0.10"`, 1)
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
