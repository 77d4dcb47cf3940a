package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
)

// TestFirewall_fakeLifecycle is TestAccFirewall_guideRulesBlockOtherPorts on fake hosts: the
// guide's rules and the firewall enable UFW with incoming denied, UFW disabled by hand is put
// back, dropping the rule the provider's SSH connection needs is refused at plan, import, and
// destroy restores UFW as it was found, off.
func TestFirewall_fakeLifecycle(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01", "gpu02")
	const node = "gpu01"
	c.host(node).InstallPackage("ufw")
	// The provider reaches gpu01 through login01; on the fake cluster both are on the loopback
	// address, and gpu01's sshd listens on its own port.
	sshPort := strconv.Itoa(c.servers[node].Port())
	sshRule := firewallRuleBlock("ssh", node, sshPort, "tcp", "127.0.0.1", "SSH from login node")
	config := c.provider("") + sshRule +
		firewallRuleBlock("slurmd", node, "6818", "tcp", "10.0.0.0/24", "slurmd") + fmt.Sprintf(`
resource "gpucluster_firewall" "test" {
  node       = %q
  ssh_rule   = gpucluster_firewall_rule.ssh.id
  depends_on = [gpucluster_firewall_rule.slurmd]
}
`, node)
	withoutSSH := strings.Replace(strings.Replace(config, sshRule, "", 1),
		"gpucluster_firewall_rule.ssh.id", fmt.Sprintf("%q", node+":allow:"+sshPort+"/tcp:from=127.0.0.1"), 1)
	const addr = "gpucluster_firewall.test"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: c.check(func() error {
			if err := c.ufwAs(node, "no", "DROP"); err != nil {
				return err
			}
			for _, port := range []string{sshPort, "6818"} {
				if err := c.ufwRule(node, port, ""); err != nil {
					return err
				}
			}
			if _, err := c.host(node).FS.Stat(firewall.ManagedPath, false); err == nil {
				return fmt.Errorf("%s: %s left after destroy", node, firewall.ManagedPath)
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("enabled"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("default_incoming"), knownvalue.StringExact("deny")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("previous_enabled"), knownvalue.Bool(false)),
				},
				Check: c.check(func() error {
					if err := c.ufwAs(node, "yes", "DROP"); err != nil {
						return err
					}
					return c.ufwRule(node, sshPort, "SSH from login node")
				}),
			},
			{
				PreConfig: func() { c.run(node, "ufw disable") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error { return c.ufwAs(node, "yes", "DROP") }),
			},
			{
				Config:      withoutSSH,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*deleting allow:` + sshPort + `/tcp:from=127\.0\.0\.1`),
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateIdFunc:       idInState(addr),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"ssh_rule", "rules", "slurm_controller", "previous_enabled", "previous_incoming", "previous_outgoing"},
			},
		},
	})
}

// ufwAs checks UFW's enabled flag and default incoming policy in its files.
func (c *fakeCluster) ufwAs(node, enabled, incoming string) error {
	r := c.host(node).Run("grep -x ENABLED=" + enabled + " " + firewall.ConfFile + " && grep -x 'DEFAULT_INPUT_POLICY=\"" + incoming + "\"' " + firewall.DefaultsFile)
	if r.Status != 0 {
		return fmt.Errorf("%s: UFW is not ENABLED=%s with incoming %s: %s", node, enabled, incoming, c.run(node, "cat "+firewall.ConfFile+" "+firewall.DefaultsFile))
	}
	return nil
}
