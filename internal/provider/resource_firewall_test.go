package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// guideFirewall is the guide's table for one GPU server, the rules ordered before the firewall.
func guideFirewall(l *lab.Lab, node string) string {
	return providerConfig(l, "") +
		firewallRuleBlock("ssh", node, "22", "tcp", "10.0.0.10", "SSH from login node") +
		firewallRuleBlock("slurmd", node, "6818", "tcp", "10.0.0.0/24", "slurmd") +
		firewallRuleBlock("srun", node, "60001:61000", "tcp", "10.0.0.0/24", "srun callbacks") + fmt.Sprintf(`
resource "gpucluster_firewall" "test" {
  node       = %q
  ssh_rule   = gpucluster_firewall_rule.ssh.id
  depends_on = [gpucluster_firewall_rule.slurmd, gpucluster_firewall_rule.srun]
}
`, node)
}

func TestAccFirewall_guideRulesBlockOtherPorts(t *testing.T) {
	l := lab.Require(t)
	const node, addr = "gpu01", "10.0.0.11"
	onHost(t, l, node, "setsid nc -lk 5555 </dev/null >/dev/null 2>&1 & echo $! > /run/tacc-nc.pid")
	t.Cleanup(func() {
		onHost(t, l, node, "kill $(cat /run/tacc-nc.pid); rm -f /run/tacc-nc.pid; ufw disable >/dev/null")
	})
	if err := checkReachable(l, "gpu02", addr, "5555", true)(nil); err != nil {
		t.Fatalf("the listener must answer before the firewall is enabled: %v", err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkFirewallClean(l, node, "allow:22/tcp:from=10.0.0.10", "allow:6818/tcp:from=10.0.0.0/24", "allow:60001:61000/tcp:from=10.0.0.0/24"),
			checkReachable(l, "gpu02", addr, "5555", true),
		),
		Steps: []resource.TestStep{
			{
				Config: guideFirewall(l, node),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_firewall.test", tfjsonpath.New("enabled"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("gpucluster_firewall.test", tfjsonpath.New("default_incoming"), knownvalue.StringExact("deny")),
					statecheck.ExpectKnownValue("gpucluster_firewall.test", tfjsonpath.New("previous_enabled"), knownvalue.Bool(false)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWStatus(l, node, "Status: active"),
					checkReachable(l, "gpu02", addr, "5555", false),
					checkReachable(l, "login01", addr, "22", true),
					checkReachable(l, "gpu02", addr, "22", false),
				),
			},
			{
				// Drift: UFW disabled by hand shows in the plan and apply enables it again.
				PreConfig: func() { onHost(t, l, node, "ufw disable") },
				Config:    guideFirewall(l, node),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall.test", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkUFWStatus(l, node, "Status: active"),
			},
			{
				// Dropping the SSH rule while UFW filters is refused at plan: the provider would lose the node.
				Config:      withoutSSHRule(guideFirewall(l, node)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*deleting allow:22/tcp:from=10\.0\.0\.10`),
				Check:       checkUFWShows(l, node, "ufw allow from 10.0.0.10 to any port 22 proto tcp"),
			},
			{
				Config: guideFirewall(l, node),
				Check:  checkReachable(l, "login01", addr, "22", true),
			},
			{
				ResourceName:      "gpucluster_firewall.test",
				ImportState:       true,
				ImportStateIdFunc: idInState("gpucluster_firewall.test"),
				ImportStateVerify: true,
				// The import lists every rule of the node in rules and leaves ssh_rule unset, where
				// this configuration names the SSH rule in ssh_rule and orders the others by depends_on;
				// it reads slurm_controller from a slurmd an earlier test may have left enabled.
				ImportStateVerifyIgnore: []string{"ssh_rule", "rules", "slurm_controller", "previous_enabled", "previous_incoming", "previous_outgoing"},
			},
		},
	})
}

func TestAccFirewall_lockout(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	bare := providerConfig(l, "") + `
resource "gpucluster_firewall" "test" {
  node = "gpu02"
}`
	// ssh_rule names a rule that is never created: the plan trusts it, the apply checks the node.
	promised := providerConfig(l, "") + `
resource "gpucluster_firewall" "test" {
  node     = "gpu02"
  ssh_rule = "gpu02:allow:22/tcp:from=10.0.0.10"
}`
	loginWrongSource := providerConfig(l, "") + firewallRuleBlock("ssh", "login01", "22", "tcp", "10.0.0.10", "SSH") + `
resource "gpucluster_firewall" "test" {
  node     = "login01"
  ssh_rule = gpucluster_firewall_rule.ssh.id
}`
	before := snapshotFirewalls(t, l)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, "allow:5605/tcp:from=any"),
		Steps: []resource.TestStep{
			{
				Config:      bare,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*gpu02.*10\.0\.0\.10 to port 22/tcp.*no allow rule admits it`),
			},
			{
				Config:      promised,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*10\.0\.0\.10 to port 22/tcp`),
			},
			{
				// On login01 the provider comes from the machine running Terraform, not from login01.
				Config:      loginWrongSource,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*login01.*10\.0\.0\.1 to port 22/tcp`),
			},
			{
				// The refused steps are compared before this one: adding and removing a rule makes
				// ufw rewrite its files, which then differ from a fresh image's in comments and order.
				PreConfig: func() {
					if after := snapshotFirewalls(t, l); after != before {
						t.Errorf("the refused firewall changed a host:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				},
				// The provider still reaches the node: it can add a rule there.
				Config: firewallRuleConfig(l, "after", node, "5605", "tcp", "any", "after lockout test"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWStatus(l, node, "Status: inactive"),
					checkUFWShows(l, node, "ufw allow 5605/tcp comment 'after lockout test'"),
				),
			},
		},
	})
}

// withoutSSHRule drops the SSH rule's resource but keeps the firewall's reference to it as text.
func withoutSSHRule(config string) string {
	config = strings.Replace(config, firewallRuleBlock("ssh", "gpu01", "22", "tcp", "10.0.0.10", "SSH from login node"), "", 1)
	return strings.Replace(config, "gpucluster_firewall_rule.ssh.id", `"gpu01:allow:22/tcp:from=10.0.0.10"`, 1)
}

func checkUFWStatus(l *lab.Lab, node, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, node, "ufw status | head -1")
		if err != nil {
			return err
		}
		if out != want {
			return fmt.Errorf("%s: ufw status = %q, want %q", node, out, want)
		}
		return nil
	}
}

// checkReachable connects from one lab host to another's TCP port; a port UFW drops times out.
func checkReachable(l *lab.Lab, from, addr, port string, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := onHostErr(l, from, fmt.Sprintf("nc -z -w 3 %s %s", addr, port))
		switch {
		case want && err != nil:
			return fmt.Errorf("from %s, %s:%s is unreachable, want reachable: %w", from, addr, port, err)
		case !want && err == nil:
			return fmt.Errorf("from %s, %s:%s is reachable, want it blocked by the firewall", from, addr, port)
		}
		return nil
	}
}

// TestAccFirewall_restoresEnabled finds UFW already enabled, with other defaults than the
// guide's, and an SSH rule made by hand: destroy enables it again with those defaults.
func TestAccFirewall_restoresEnabled(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	const sshByHand = "ufw allow from 10.0.0.10 to any port 22 proto tcp"
	// The cleanup puts UFW's files back byte for byte: tests after this one compare them, and a
	// file that ufw rewrites on the way back differs from the image's in its comments and order.
	const backup = "/root/ufw-before-restoresEnabled.tar"
	onHost(t, l, node, "tar -cpf "+backup+" /etc/ufw /etc/default/ufw 2>/dev/null")
	onHost(t, l, node, sshByHand+" && ufw default reject incoming && ufw default deny outgoing && ufw --force enable")
	t.Cleanup(func() {
		onHost(t, l, node, "ufw --force disable >/dev/null && rm -rf /etc/ufw /etc/default/ufw && tar -xpf "+backup+" -C / && rm "+backup)
	})
	config := providerConfig(l, "") + firewallRuleBlock("ssh", node, "22", "tcp", "10.0.0.10", "") + `
resource "gpucluster_firewall" "test" {
  node  = "gpu02"
  rules = [gpucluster_firewall_rule.ssh.id]
}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkUFWVerbose(l, node, "Status: active", "Default: reject (incoming), deny (outgoing)"),
			checkUFWShows(l, node, sshByHand),
		),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_firewall.test", tfjsonpath.New("previous_enabled"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("gpucluster_firewall.test", tfjsonpath.New("previous_incoming"), knownvalue.StringExact("reject")),
				statecheck.ExpectKnownValue("gpucluster_firewall.test", tfjsonpath.New("previous_outgoing"), knownvalue.StringExact("deny")),
				statecheck.ExpectKnownValue("gpucluster_firewall_rule.ssh", tfjsonpath.New("adopted"), knownvalue.Bool(true)),
			},
			Check: checkUFWVerbose(l, node, "Status: active", "Default: deny (incoming), allow (outgoing)"),
		}},
	})
}

// checkUFWVerbose wants each of lines in `ufw status verbose`.
func checkUFWVerbose(l *lab.Lab, node string, lines ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, node, "ufw status verbose")
		if err != nil {
			return err
		}
		for _, want := range lines {
			if !strings.Contains(out, want) {
				return fmt.Errorf("%s: ufw status verbose lacks %q:\n%s", node, want, out)
			}
		}
		return nil
	}
}

func TestMissingRules(t *testing.T) {
	rule := func(key string) firewall.Rule {
		_, r, err := firewall.ParseID("gpu01:" + key)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ssh, slurmd := rule("allow:22/tcp:from=10.0.0.10"), rule("allow:6818/tcp:from=10.0.0.0/24")
	commented := ssh
	commented.Comment = "SSH from login node"
	tests := []struct {
		name           string
		onNode, listed []firewall.Rule
		want           string
	}{
		{"all in place", []firewall.Rule{commented, slurmd}, []firewall.Rule{ssh, slurmd}, ""},
		{"nothing listed", nil, nil, ""},
		{"one missing", []firewall.Rule{commented}, []firewall.Rule{ssh, slurmd}, "allow:6818/tcp:from=10.0.0.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(missingRules(tt.onNode, tt.listed), ","); got != tt.want {
				t.Errorf("missingRules = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAccFirewall_ruleNotInPlace lists a rule no resource creates: the apply refuses to enable
// UFW without it and leaves the node as it was.
func TestAccFirewall_ruleNotInPlace(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	config := providerConfig(l, "") + firewallRuleBlock("ssh", node, "22", "tcp", "10.0.0.10", "SSH from login node") + `
resource "gpucluster_firewall" "test" {
  node  = "gpu02"
  rules = [gpucluster_firewall_rule.ssh.id, "gpu02:allow:5606/tcp:from=any"]
}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		// checkFirewallClean also wants UFW still inactive.
		CheckDestroy: checkFirewallClean(l, node, "allow:22/tcp:from=10.0.0.10"),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: regexp.MustCompile(`(?s)Rule Not In Place.*gpu02.*allow:5606/tcp:from=any`),
		}},
	})
}
