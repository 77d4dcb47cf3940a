package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
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
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

func firewallRuleConfig(l *lab.Lab, name, node, port, proto, from, comment string) string {
	return providerConfig(l, "") + firewallRuleBlock(name, node, port, proto, from, comment)
}

func firewallRuleBlock(name, node, port, proto, from, comment string) string {
	return fmt.Sprintf(`
resource "gpucluster_firewall_rule" %q {
  node    = %q
  port    = %q
  proto   = %q
  from    = %q
  comment = %q
}
`, name, node, port, proto, from, comment)
}

func TestAccFirewallRule_lifecycle(t *testing.T) {
	l := lab.Require(t)
	const node, port, from = "gpu02", "5601", "10.0.0.0/24"
	const id = "gpu02:allow:5601/tcp:from=10.0.0.0/24"
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, "allow:5601/tcp:from=10.0.0.0/24"),
		Steps: []resource.TestStep{
			{
				Config: firewallRuleConfig(l, "test", node, port, "tcp", from, "tacc one"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("id"), knownvalue.StringExact(id)),
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("action"), knownvalue.StringExact("allow")),
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("adopted"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
					sameID.AddStateValue("gpucluster_firewall_rule.test", tfjsonpath.New("id")),
				},
				Check: checkUFWShows(l, node, "ufw allow from 10.0.0.0/24 to any port 5601 proto tcp comment 'tacc one'"),
			},
			{
				Config: firewallRuleConfig(l, "test", node, port, "tcp", from, "tacc two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("comment"), knownvalue.StringExact("tacc two")),
					sameID.AddStateValue("gpucluster_firewall_rule.test", tfjsonpath.New("id")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWShows(l, node, "ufw allow from 10.0.0.0/24 to any port 5601 proto tcp comment 'tacc two'"),
					checkTupleCount(l, node, "5601", 1),
				),
			},
			{
				// The rule is this state's: a second import would make two owners.
				ResourceName:  "gpucluster_firewall_rule.test",
				ImportState:   true,
				ImportStateId: id,
				ExpectError:   regexp.MustCompile(`(?s)Firewall Rule Already Managed.*allow:5601/tcp:from=10.0.0.0/24.*` + firewall.LedgerPath),
			},
			{
				// The documented hand-over: its ledger line deleted, the rule imports. Import only
				// reads: the apply after it records the rule.
				PreConfig:               func() { onHost(t, l, node, `sed -i '\|^allow:5601/tcp:from=10.0.0.0/24$|d' `+firewall.LedgerPath) },
				ResourceName:            "gpucluster_firewall_rule.test",
				ImportState:             true,
				ImportStateIdFunc:       idInState("gpucluster_firewall_rule.test"),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"recorded"},
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if got := states[0].Attributes["recorded"]; got != "false" {
						return fmt.Errorf("recorded = %q after import, want false", got)
					}
					return checkNotOwned(l, node, "allow:5601/tcp:from=10.0.0.0/24")
				},
			},
			{
				// Hand-made drift: the plan recreates the rule and apply restores it.
				PreConfig: func() { onHost(t, l, node, "ufw delete allow proto tcp from 10.0.0.0/24 to any port 5601") },
				Config:    firewallRuleConfig(l, "test", node, port, "tcp", from, "tacc two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkUFWShows(l, node, "ufw allow from 10.0.0.0/24 to any port 5601 proto tcp comment 'tacc two'"),
			},
			{
				// A comment changed by hand shows as an update.
				PreConfig: func() {
					onHost(t, l, node, "ufw allow proto tcp from 10.0.0.0/24 to any port 5601 comment 'by hand'")
				},
				Config: firewallRuleConfig(l, "test", node, port, "tcp", from, "tacc two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionUpdate)},
				},
				Check: checkUFWShows(l, node, "ufw allow from 10.0.0.0/24 to any port 5601 proto tcp comment 'tacc two'"),
			},
		},
	})
}

// ledgerDigest is the sha256 of node's ownership ledger, or "absent".
func ledgerDigest(t *testing.T, l *lab.Lab, node string) string {
	return onHost(t, l, node, fmt.Sprintf("if [ -e %[1]s ]; then sha256sum %[1]s; else echo absent; fi", firewall.LedgerPath))
}

// An import block is imported during the plan, and a plan must not change a host: two plans of
// it leave the ledger byte for byte as it was, the second is not refused as a rule already
// managed, and the apply records the rule, as an update of `recorded` alone.
func TestAccFirewallRule_importBlockPlanWritesNothing(t *testing.T) {
	l := lab.Require(t)
	const node, key = "gpu02", "allow:5604/tcp:from=10.0.0.0/24"
	onHost(t, l, node, "ufw allow proto tcp from 10.0.0.0/24 to any port 5604 comment 'made by hand'")
	config := firewallRuleConfig(l, "test", node, "5604", "tcp", "10.0.0.0/24", "made by hand") +
		importBlock("gpucluster_firewall_rule.test", strconv.Quote(node+":"+key))
	before := ledgerDigest(t, l, node)
	ledgerUnchanged := func() {
		if after := ledgerDigest(t, l, node); after != before {
			t.Fatalf("%s: a plan changed %s: sha256 %s before, %s after", node, firewall.LedgerPath, before, after)
		}
	}
	planOnly := resource.TestStep{
		Config:             config,
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}
	secondPlan := planOnly
	secondPlan.PreConfig = ledgerUnchanged
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, key),
		Steps: []resource.TestStep{
			planOnly,
			secondPlan,
			{
				PreConfig: ledgerUnchanged,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("adopted"), knownvalue.Bool(false)),
				},
				Check: checkLedgerLists(l, node, key),
			},
		},
	})
}

// A rule imported into the state that another state records before the apply is refused at
// plan; a ledger line deleted by hand plans as recorded false -> true, and the apply writes it
// back without running ufw.
func TestAccFirewallRule_recordsAtApply(t *testing.T) {
	l := lab.Require(t)
	const node, key = "gpu02", "allow:5605/tcp:from=10.0.0.0/24"
	onHost(t, l, node, "ufw allow proto tcp from 10.0.0.0/24 to any port 5605 comment 'made by hand'")
	config := firewallRuleConfig(l, "test", node, "5605", "tcp", "10.0.0.0/24", "made by hand")
	unlist := func() { onHost(t, l, node, fmt.Sprintf(`sed -i '\|^%s$|d' %s`, key, firewall.LedgerPath)) }
	recordOnly := resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	var rulesFileStat string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, key),
		Steps: append(importedThenTaken(t, l, config, node, key),
			resource.TestStep{
				PreConfig:        unlist,
				Config:           config,
				ConfigPlanChecks: recordOnly,
				Check:            checkLedgerLists(l, node, key),
			},
			resource.TestStep{
				PreConfig: func() {
					unlist()
					rulesFileStat = onHost(t, l, node, "stat -c %y "+firewall.RulesFile)
				},
				Config:           config,
				ConfigPlanChecks: recordOnly,
				Check: func(*terraform.State) error {
					if now := onHost(t, l, node, "stat -c %y "+firewall.RulesFile); now != rulesFileStat {
						return fmt.Errorf("%s: recording the rule rewrote %s (modified %s, before %s)", node, firewall.RulesFile, now, rulesFileStat)
					}
					return checkLedgerLists(l, node, key)(nil)
				},
			},
		),
	})
}

// Destroying an imported resource whose rule another state recorded since leaves that state
// the rule and its ledger line.
func TestAccFirewallRule_unrecordedDestroyLeavesOwner(t *testing.T) {
	l := lab.Require(t)
	const node, key = "gpu02", "allow:5606/tcp:from=10.0.0.0/24"
	onHost(t, l, node, "ufw allow proto tcp from 10.0.0.0/24 to any port 5606 comment 'made by hand'")
	t.Cleanup(func() {
		onHost(t, l, node, fmt.Sprintf(`ufw delete allow proto tcp from 10.0.0.0/24 to any port 5606; sed -i '\|^%s$|d' %s`, key, firewall.LedgerPath))
	})
	config := firewallRuleConfig(l, "test", node, "5606", "tcp", "10.0.0.0/24", "made by hand")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkTupleCount(l, node, "5606", 1),
			checkLedgerLists(l, node, key),
		),
		Steps: importedThenTaken(t, l, config, node, key),
	})
}

// importedThenTaken imports node's rule key into the state (terraform import), then another
// state records the rule: the plan refuses to record it a second time.
func importedThenTaken(t *testing.T, l *lab.Lab, config, node, key string) []resource.TestStep {
	return []resource.TestStep{
		{
			Config:             config,
			ResourceName:       "gpucluster_firewall_rule.test",
			ImportState:        true,
			ImportStateId:      node + ":" + key,
			ImportStatePersist: true,
		},
		{
			// Another state took the rule since the import.
			PreConfig:   func() { onHost(t, l, node, fmt.Sprintf("echo %s >> %s", key, firewall.LedgerPath)) },
			Config:      config,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Firewall Rule Already Managed.*` + key),
		},
	}
}

// An existing rule is adopted, not added twice, and survives destroy.
func TestAccFirewallRule_adoptsExistingRule(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	onHost(t, l, node, "ufw allow proto udp from 10.0.0.0/24 to any port 5602 comment 'made by hand'")
	t.Cleanup(func() { onHost(t, l, node, "ufw delete allow proto udp from 10.0.0.0/24 to any port 5602") })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if err := checkTupleCount(l, node, "5602", 1)(nil); err != nil {
				return fmt.Errorf("an adopted rule must stay after destroy: %w", err)
			}
			return checkNotOwned(l, node, "allow:5602/udp:from=10.0.0.0/24")
		},
		Steps: []resource.TestStep{{
			Config: firewallRuleConfig(l, "test", node, "5602", "udp", "10.0.0.0/24", "made by hand"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("adopted"), knownvalue.Bool(true)),
			},
			Check: checkTupleCount(l, node, "5602", 1),
		}},
	})
}

// A second resource declaring a rule that another already manages is refused at plan, and
// the owner's rule is left alone.
func TestAccFirewallRule_duplicateRefused(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	first := firewallRuleConfig(l, "first", node, "5603", "tcp", "10.0.0.10", "first")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, "allow:5603/tcp:from=10.0.0.10"),
		Steps: []resource.TestStep{
			{Config: first},
			{
				// 10.0.0.10/32 normalizes to the same rule.
				Config:      first + firewallRuleBlock("second", node, "5603", "tcp", "10.0.0.10/32", "second"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)(Firewall Rule Already Managed|Duplicate Firewall Rule).*allow:5603/tcp:from=10.0.0.10`),
			},
			{
				Config: first,
				Check:  checkUFWShows(l, node, "ufw allow from 10.0.0.10 to any port 5603 proto tcp comment 'first'"),
			},
		},
	})
}

func checkUFWShows(l *lab.Lab, node, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, node, "ufw show added")
		if err != nil {
			return err
		}
		if !strings.Contains(out, want) {
			return fmt.Errorf("%s: ufw show added lacks %q:\n%s", node, want, out)
		}
		return nil
	}
}

func checkTupleCount(l *lab.Lab, node, port string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, node, fmt.Sprintf("grep -c '^### tuple ### [a-z]* [a-z]* %s ' %s || true", port, firewall.RulesFile))
		if err != nil {
			return err
		}
		if out != fmt.Sprint(want) {
			return fmt.Errorf("%s: %s tuples for port %s in %s, want %d", node, out, port, firewall.RulesFile, want)
		}
		return nil
	}
}

func checkLedgerLists(l *lab.Lab, node, key string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, _, err := l.Exec(context.Background(), node, fmt.Sprintf("grep -qxF %q %s", key, firewall.LedgerPath)); err != nil {
			return fmt.Errorf("%s: %s does not list %s: %w", node, firewall.LedgerPath, key, err)
		}
		return nil
	}
}

func checkNotOwned(l *lab.Lab, node, key string) error {
	if _, _, err := l.Exec(context.Background(), node, fmt.Sprintf("grep -qxF %q %s", key, firewall.LedgerPath)); err == nil {
		return fmt.Errorf("%s: %s still lists %s", node, firewall.LedgerPath, key)
	}
	return nil
}

// checkFirewallClean is the CheckDestroy of the firewall tests: the rules are gone from UFW's
// files and from the ledger, and UFW is disabled, as every test must leave the shared hosts.
func checkFirewallClean(l *lab.Lab, node string, keys ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, key := range keys {
			_, r, err := firewall.ParseID(node + ":" + key)
			if err != nil {
				return err
			}
			if err := checkTupleCount(l, node, r.Port, 0)(nil); err != nil {
				return err
			}
			if err := checkNotOwned(l, node, key); err != nil {
				return err
			}
		}
		out, err := onHostErr(l, node, "ufw status; test ! -e "+firewall.ManagedPath+" || echo marker left")
		if err != nil {
			return err
		}
		if out != "Status: inactive" {
			return fmt.Errorf("%s: UFW left active, or %s left, after the test: %s", node, firewall.ManagedPath, out)
		}
		return nil
	}
}

func snapshotFirewalls(t *testing.T, l *lab.Lab) string {
	var b strings.Builder
	for _, n := range labNodeNames(l) {
		fmt.Fprintf(&b, "%s:\n%s\n", n, onHost(t, l, n, "cat /etc/ufw/user.rules /etc/ufw/user6.rules /etc/ufw/ufw.conf /etc/default/ufw; cat "+firewall.LedgerPath+" 2>/dev/null || true"))
	}
	return b.String()
}
