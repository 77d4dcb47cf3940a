package provider

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
)

// TestFirewallRule_fakeLifecycle is TestAccFirewallRule_lifecycle on fake hosts with UFW: create
// records the rule in the ledger, a comment changes in place, an owned rule refuses a second
// import, the documented hand-over imports it, a rule deleted by hand is made again and a
// comment changed by hand is put back; destroy removes rule and ledger line.
func TestFirewallRule_fakeLifecycle(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01", "gpu02")
	c.host("gpu02").InstallPackage("ufw")
	const node, key = "gpu02", "allow:5601/tcp:from=10.0.0.0/24"
	const id = node + ":" + key
	const addr = "gpucluster_firewall_rule.test"
	config := func(comment string) string {
		return c.provider("") + firewallRuleBlock("test", node, "5601", "tcp", "10.0.0.0/24", comment)
	}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: c.check(func() error {
			if err := c.ufwRule(node, "5601", ""); err != nil {
				return err
			}
			return c.ledgerHolds(node, key, false)
		}),
		Steps: []resource.TestStep{
			{
				Config: config("one"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(id)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("action"), knownvalue.StringExact("allow")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("adopted"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("recorded"), knownvalue.Bool(true)),
					sameID.AddStateValue(addr, tfjsonpath.New("id")),
				},
				Check: c.check(func() error {
					if err := c.ufwRule(node, "5601", "one"); err != nil {
						return err
					}
					return c.ledgerHolds(node, key, true)
				}),
			},
			{
				Config: config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(addr, tfjsonpath.New("id"))},
				Check:             c.check(func() error { return c.ufwRule(node, "5601", "two") }),
			},
			{
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: id,
				ExpectError:   regexp.MustCompile(`(?s)Firewall Rule Already Managed.*` + regexp.QuoteMeta(key) + `.*` + firewall.LedgerPath),
			},
			{
				PreConfig:               func() { c.dropLedgerLine(node, key) },
				ResourceName:            addr,
				ImportState:             true,
				ImportStateIdFunc:       idInState(addr),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"recorded"},
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if got := states[0].Attributes["recorded"]; got != "false" {
						return fmt.Errorf("recorded = %q after import, want false", got)
					}
					return c.ledgerHolds(node, key, false)
				},
			},
			{
				PreConfig: func() { c.run(node, "ufw delete allow proto tcp from 10.0.0.0/24 to any port 5601") },
				Config:    config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error {
					if err := c.ufwRule(node, "5601", "two"); err != nil {
						return err
					}
					return c.ledgerHolds(node, key, true)
				}),
			},
			{
				PreConfig: func() { c.run(node, "ufw allow proto tcp from 10.0.0.0/24 to any port 5601 comment 'by hand'") },
				Config:    config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error { return c.ufwRule(node, "5601", "two") }),
			},
		},
	})
}

// ufwRule checks that node's UFW files hold exactly one rule for port, with comment; with an
// empty comment, that they hold none.
func (c *fakeCluster) ufwRule(node, port, comment string) error {
	data, err := c.host(node).FS.ReadFile(firewall.RulesFile)
	if err != nil {
		return err
	}
	tuples, err := firewall.ParseTuples(string(data))
	if err != nil {
		return err
	}
	var found []firewall.Tuple
	for _, tp := range tuples {
		if tp.DPort == port {
			found = append(found, tp)
		}
	}
	switch {
	case comment == "" && len(found) > 0:
		return fmt.Errorf("%s: rules for port %s left: %+v", node, port, found)
	case comment != "" && (len(found) != 1 || found[0].Comment != comment):
		return fmt.Errorf("%s: rules for port %s are %+v, want one with comment %q", node, port, found, comment)
	}
	return nil
}

func (c *fakeCluster) ledgerLines(node string) []string {
	data, err := c.host(node).FS.ReadFile(firewall.LedgerPath)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func (c *fakeCluster) ledgerHolds(node, key string, want bool) error {
	if got := slices.Contains(c.ledgerLines(node), key); got != want {
		return fmt.Errorf("%s: %s lists %s: %v, want %v", node, firewall.LedgerPath, key, got, want)
	}
	return nil
}

// dropLedgerLine deletes key's line from the ledger, as the documented hand-over does by hand.
func (c *fakeCluster) dropLedgerLine(node, key string) {
	kept := slices.DeleteFunc(c.ledgerLines(node), func(l string) bool { return l == key })
	if err := c.host(node).FS.WriteFile(firewall.LedgerPath, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		c.t.Fatal(err)
	}
}
