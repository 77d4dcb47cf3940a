package provider

import (
	"crypto/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

func TestFirewallPlansDeclare(t *testing.T) {
	rule := firewall.Rule{Action: "allow", Port: "6818", Proto: "tcp", From: "10.0.0.0/16"}
	var f firewallPlans
	replaced := f.issue(firewallRuleModel{})
	firstPlan := f.declare("gpu01", rule, replaced)
	createHalf := f.declare("gpu01", rule, replaced)
	if firstPlan || createHalf {
		t.Error("a replacement, planned once with its prior state and once as the create half, was taken for two resources")
	}
	if !f.declare("gpu01", rule, rand.Text()) {
		t.Error("a second resource creating the replaced rule was not refused")
	}
	if f.declare("gpu02", rule, rand.Text()) {
		t.Error("one rule on two nodes was refused")
	}
	if _, ok := f.priorOf(replaced); !ok {
		t.Error("the token issued for a resource in state is not known")
	}
	if _, ok := f.priorOf("from an earlier run"); ok {
		t.Error("a token this run did not issue is known")
	}
}

func TestFirewallPlansRemove(t *testing.T) {
	var f firewallPlans
	f.remove("gpu01", "allow:22/tcp:from=10.0.0.10")
	f.remove("gpu02", "allow:22/tcp:from=any")
	got := f.remove("gpu01", "allow:22/tcp:from=10.0.0.0/24")
	if len(got) != 2 || !got["allow:22/tcp:from=10.0.0.10"] || !got["allow:22/tcp:from=10.0.0.0/24"] {
		t.Errorf("the second removal on gpu01 sees %v, want both of gpu01's removals", got)
	}
	rules := []firewall.Rule{{Action: "allow", Port: "22", Proto: "tcp", From: "10.0.0.10"}, {Action: "allow", Port: "6818", Proto: "tcp", From: "any"}}
	if left := withoutKeys(rules, got); len(left) != 1 || left[0].Port != "6818" {
		t.Errorf("withoutKeys left %v, want the 6818 rule only", left)
	}
	onNode := firewall.State{Enabled: true, Incoming: firewall.PolicyDeny}
	if sw := f.plannedSwitch("gpu01", onNode); !sw.enabled || sw.incoming != firewall.PolicyDeny {
		t.Errorf("no firewall was planned, but the switch is %+v, not the node's", sw)
	}
	f.setSwitch("gpu01", firewallSwitch{enabled: false, incoming: firewall.PolicyDeny})
	if sw := f.plannedSwitch("gpu01", onNode); sw.enabled {
		t.Errorf("the planned switch %+v is not the one recorded", sw)
	}
}

// A rule removal on a node whose UFW a gpucluster_firewall manages waits for that firewall's
// plan, which Terraform plans after the rules it lists; elsewhere, or once the firewall is
// planned, it is checked at once.
func TestFirewallPlansRemovalWaitsForManagingFirewall(t *testing.T) {
	var f firewallPlans
	const ssh = "allow:22/tcp:from=10.0.0.10"
	if f.waitForFirewall("gpu01", ssh, "deleting "+ssh, false) {
		t.Error("a removal on a node no gpucluster_firewall manages waits, want a check at once")
	}
	if !f.waitForFirewall("gpu02", ssh, "deleting "+ssh, true) {
		t.Error("a removal on a managed node whose firewall is not planned yet is checked at once, want it to wait")
	}
	off := firewallSwitch{enabled: false, incoming: firewall.PolicyDeny}
	if waiting := f.setSwitch("gpu02", off); len(waiting) != 1 || waiting[ssh] != "deleting "+ssh {
		t.Errorf("the firewall's plan got the waiting removals %v, want %s", waiting, ssh)
	}
	if waiting := f.setSwitch("gpu02", off); len(waiting) != 0 {
		t.Errorf("a waiting removal was handed out twice: %v", waiting)
	}
	if f.waitForFirewall("gpu02", "allow:6818/tcp:from=any", "deleting allow:6818/tcp:from=any", true) {
		t.Error("after the firewall's plan a removal still waits, want its switch at once")
	}
	if sw := f.plannedSwitch("gpu02", firewall.State{Enabled: true}); sw != off {
		t.Errorf("planned switch %+v, want the firewall's %+v", sw, off)
	}
}

// TestAccFirewall_planShapes runs the plan shapes that used to go wrong on a GPU server with the
// guide's rules and UFW enabled: a changed source replaces the slurmd rule (once refused as a
// duplicate), and deleting or narrowing the SSH rule, or deleting two SSH rules together, is
// refused at plan with every host unchanged. The final destroy shows that removing the rules
// together with the firewall that filters them is not taken for a lockout.
func TestAccFirewall_planShapes(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu01"
	base := guideFirewall(l, node)
	wider := strings.Replace(base, firewallRuleBlock("slurmd", node, "6818", "tcp", "10.0.0.0/24", "slurmd"),
		firewallRuleBlock("slurmd", node, "6818", "tcp", "10.0.0.0/16", "slurmd"), 1)
	// The same rule written another way: Terraform replaces the resource, the rule is its own.
	rewritten := strings.Replace(wider, firewallRuleBlock("slurmd", node, "6818", "tcp", "10.0.0.0/16", "slurmd"),
		firewallRuleBlock("slurmd", node, "6818", "tcp", "10.0.7.7/16", "slurmd"), 1)
	narrowed := strings.Replace(wider, firewallRuleBlock("ssh", node, "22", "tcp", "10.0.0.10", "SSH from login node"),
		firewallRuleBlock("ssh", node, "22", "tcp", "10.0.0.99", "SSH from login node"), 1)
	twoSSH := wider + firewallRuleBlock("ssh_subnet", node, "22", "tcp", "10.0.0.0/24", "SSH from the subnet")
	var before string
	snapshot := func() { before = snapshotFirewalls(t, l) }
	unchanged := func(*terraform.State) error {
		if after := snapshotFirewalls(t, l); after != before {
			t.Errorf("a plan that was refused changed a host:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: checkFirewallClean(l, node, "allow:22/tcp:from=10.0.0.10", "allow:22/tcp:from=10.0.0.0/24", "allow:6818/tcp:from=10.0.0.0/16",
			"allow:60001:61000/tcp:from=10.0.0.0/24"),
		Steps: []resource.TestStep{
			{Config: base, Check: checkUFWStatus(l, node, "Status: active")},
			{
				Config: wider,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.slurmd", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWShows(l, node, "ufw allow from 10.0.0.0/16 to any port 6818 proto tcp comment 'slurmd'"),
					checkTupleCount(l, node, "6818", 1),
				),
			},
			{
				Config: rewritten,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.slurmd", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: checkTupleCount(l, node, "6818", 1),
			},
			{Config: wider, Check: checkUFWShows(l, node, "ufw allow from 10.0.0.0/16 to any port 6818 proto tcp comment 'slurmd'")},
			{
				PreConfig:   snapshot,
				Config:      withoutSSHRule(wider),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*gpu01.*Keep this rule.*deleting allow:22/tcp:from=10\.0\.0\.10`),
			},
			{
				PreConfig:   unchangedThen(unchanged, snapshot),
				Config:      narrowed,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*replacing allow:22/tcp:from=10\.0\.0\.10`),
			},
			{PreConfig: unchangedThen(unchanged, func() {}), Config: twoSSH},
			{
				// Each SSH rule alone may go; both together may not.
				PreConfig:   snapshot,
				Config:      withoutSSHRule(wider),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*deleting allow:22/tcp:from=10\.0\.0\.`),
			},
			{PreConfig: unchangedThen(unchanged, func() {}), Config: twoSSH, PlanOnly: true},
		},
	})
}

// unchangedThen runs a host comparison as a step's PreConfig, then next.
func unchangedThen(check resource.TestCheckFunc, next func()) func() {
	return func() {
		_ = check(nil)
		next()
	}
}

// TestAccFirewall_denyRuleLockout: with UFW enabled and incoming traffic allowed, a deny rule
// matching the provider's own connection would cut it. It is refused at plan, no host changed.
func TestAccFirewall_denyRuleLockout(t *testing.T) {
	l := lab.Require(t)
	open := providerConfig(l, "") + `
resource "gpucluster_firewall" "test" {
  node             = "gpu02"
  default_incoming = "allow"
}
`
	deny := func(from string) string {
		return open + `
resource "gpucluster_firewall_rule" "deny" {
  node       = "gpu02"
  action     = "deny"
  port       = "22"
  from       = "` + from + `"
  depends_on = [gpucluster_firewall.test]
}
`
	}
	// UFW drops its logging rule for incoming traffic from user.rules while incoming is allowed,
	// and a policy set back while UFW is disabled does not restore it: leave the file as the
	// other tests' snapshots expect.
	t.Cleanup(func() { onHost(t, l, "gpu02", "ufw logging low >/dev/null") })
	var before string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, "gpu02", "deny:22/tcp:from=10.0.0.99", "deny:22/tcp:from=10.0.0.10"),
		Steps: []resource.TestStep{
			{Config: open, Check: checkUFWStatus(l, "gpu02", "Status: active")},
			{
				// A deny rule for another source leaves the provider connected.
				Config: deny("10.0.0.99"),
				Check:  checkUFWShows(l, "gpu02", "ufw deny from 10.0.0.99 to any port 22 proto tcp"),
			},
			{
				PreConfig:   func() { before = snapshotFirewalls(t, l) },
				Config:      deny("10.0.0.10"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*gpu02.*adding deny:22/tcp:from=10\.0\.0\.10.*matches it first`),
			},
			{
				PreConfig: func() {
					if after := snapshotFirewalls(t, l); after != before {
						t.Errorf("a refused plan changed a host:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				},
				Config: deny("10.0.0.99"), PlanOnly: true,
			},
		},
	})
}

// A replacement Terraform forces without a changed attribute (replace_triggered_by, like
// -replace) is one resource: its first plan looks like an update, and its create half is not
// a second declaration of the rule or another owner of it.
func TestAccFirewallRule_forcedReplacement(t *testing.T) {
	l := lab.Require(t)
	config := func(trigger string) string {
		return providerConfig(l, "") + `
resource "terraform_data" "trigger" {
  input = "` + trigger + `"
}

resource "gpucluster_firewall_rule" "test" {
  node    = "gpu02"
  port    = "5691"
  from    = "10.0.0.0/24"
  comment = "forced replacement"
  lifecycle {
    replace_triggered_by = [terraform_data.trigger]
  }
}
`
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, "gpu02", "allow:5691/tcp:from=10.0.0.0/24"),
		Steps: []resource.TestStep{
			{Config: config("one")},
			{
				Config: config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWShows(l, "gpu02", "ufw allow from 10.0.0.0/24 to any port 5691 proto tcp comment 'forced replacement'"),
					checkTupleCount(l, "gpu02", "5691", 1),
				),
			},
		},
	})
}

// On login01 the provider comes from the machine running Terraform: deleting login01's SSH row
// (the guide's, from any) while UFW filters is refused at plan, login01 unchanged.
func TestAccFirewall_loginSSHRowRefusedAtPlan(t *testing.T) {
	l := lab.Require(t)
	withRows := func(ssh bool) string {
		config := providerConfig(l, "") + firewallRuleBlock("slurmctld", "login01", "6817", "tcp", "10.0.0.0/24", "slurmctld")
		ref := `"login01:allow:22/tcp:from=any"`
		if ssh {
			config += firewallRuleBlock("ssh", "login01", "22", "tcp", "any", "SSH")
			ref = "gpucluster_firewall_rule.ssh.id"
		}
		return config + `
resource "gpucluster_firewall" "login01" {
  node     = "login01"
  ssh_rule = ` + ref + `
  rules    = [gpucluster_firewall_rule.slurmctld.id]
}
`
	}
	var before string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, "login01", "allow:22/tcp:from=any", "allow:6817/tcp:from=10.0.0.0/24"),
		Steps: []resource.TestStep{
			{Config: withRows(true), Check: checkUFWStatus(l, "login01", "Status: active")},
			{
				PreConfig:   func() { before = snapshotFirewalls(t, l) },
				Config:      withRows(false),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*login01.*deleting allow:22/tcp:from=any.*10\.0\.0\.1 to port 22/tcp`),
			},
			{
				PreConfig: func() {
					if after := snapshotFirewalls(t, l); after != before {
						t.Errorf("a refused plan changed a host:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				},
				Config: withRows(true), PlanOnly: true,
			},
		},
	})
}
