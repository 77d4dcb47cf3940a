package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

const allowGroupsFile = "/etc/ssh/sshd_config.d/90-allow-sudo.conf"

func nodeConfig(l *lab.Lab, name, extra string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_node" "test" {
  name  = %q
%s
}
`, name, extra)
}

func TestAccNode_lifecycle(t *testing.T) {
	l := lab.Require(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkNodeReleased(l, "gpu01"),
		Steps: []resource.TestStep{
			{
				Config: nodeConfig(l, "gpu01", `  roles = ["compute"]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("hostname"), knownvalue.StringExact("gpu01")),
					statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("os_id"), knownvalue.StringExact("debian")),
					statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("os_version_id"), knownvalue.StringExact("13")),
					statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("address"), knownvalue.StringExact("gpu01")),
					sameID.AddStateValue("gpucluster_node.test", tfjsonpath.New("id")),
				},
				Check: checkFactsMatchHost(l, "gpu01"),
			},
			{
				Config: nodeConfig(l, "gpu01", `  roles = ["compute", "storage"]
  ssh_allow_groups = ["sudo"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_node.test", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("roles"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("compute"), knownvalue.StringExact("storage")})),
					sameID.AddStateValue("gpucluster_node.test", tfjsonpath.New("id")),
				},
				Check: checkFileContent(l, "gpu01", allowGroupsFile, "AllowGroups sudo"),
			},
			{
				ResourceName:            "gpucluster_node.test",
				ImportState:             true,
				ImportStateIdFunc:       idInState("gpucluster_node.test"),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"roles"},
			},
			{
				// The drop-in removed by hand shows as drift and is written again.
				PreConfig: func() { onHost(t, l, "gpu01", "rm "+allowGroupsFile+" && systemctl reload ssh") },
				Config: nodeConfig(l, "gpu01", `  roles = ["compute", "storage"]
  ssh_allow_groups = ["sudo"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_node.test", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkFileContent(l, "gpu01", allowGroupsFile, "AllowGroups sudo"),
			},
		},
	})
}

func TestAccNode_refusals(t *testing.T) {
	l := lab.Require(t)
	snapshot := "cat " + allowGroupsFile + " 2>/dev/null; stat -c %Y " + allowGroupsFile + " 2>/dev/null || echo absent"
	before := onHost(t, l, "gpu02", snapshot)
	cases := map[string]struct{ config, want string }{
		"hostname mismatch": {nodeConfig(l, "gpu09", `  address = "gpu01"`), `(?s)Hostname Mismatch.*gpu01`},
		"admin not in allow groups": {nodeConfig(l, "gpu02", `  ssh_allow_groups = ["nobody-group"]`),
			`(?s)SSH Access Would Lock Out The Provider.*nobody-group`},
		"unreachable": {nodeConfig(l, "gpu02", `  address = "10.0.0.99"`), `Cannot Connect To Node`},
	}
	expectRefused(t, cases)
	if after := onHost(t, l, "gpu02", snapshot); after != before {
		t.Errorf("gpu02: a refused plan changed %s: before %q, after %q", allowGroupsFile, before, after)
	}
}

func TestAccProvider_connectionFaults(t *testing.T) {
	l := lab.Require(t)
	const wrongKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC4mYlGrvxA7bR1X2R3c3lQ3Q3oPpZb8cYy1yVvQm3V1"
	gpu01 := l.Host("gpu01")
	login01 := l.Host("login01")
	node := `
resource "gpucluster_node" "test" {
  name = "gpu01"
}`
	cases := map[string]struct{ config, want string }{
		"wrong sudo password": {
			replaceSudoPassword(nodeConfig(l, "gpu01", ""), l.AdminPassword, "not-the-password"),
			`(?s)Sudo Password Rejected.*sudo_password`,
		},
		"wrong host key for the target": {
			withHostKeys(t, l, []string{"login01"}, gpu01.Name+","+gpu01.Address+" "+wrongKey) + node,
			`Host Key Verification Failed`,
		},
		"wrong host key for the jump host": {
			withHostKeys(t, l, []string{"gpu01"}, login01.Name+","+login01.Address+" "+wrongKey) + node,
			`Host Key Verification Failed`,
		},
		"real key of the target pinned for another host": {
			withHostKeys(t, l, []string{"login01"}, "login01 "+labHostKey(t, l, "gpu01", "")) + node,
			`Unknown Host Key`,
		},
		"unknown host key": {
			withHostKeys(t, l, []string{"login01"}) + node,
			`(?s)Unknown Host Key.*` + regexp.QuoteMeta(gpu01.Address+","+gpu01.Name+" "+labHostKey(t, l, "gpu01", "ssh-ed25519")),
		},
	}
	expectRefused(t, cases)
}

func TestAccNodeFactsDataSource(t *testing.T) {
	l := lab.Require(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(l, "") + `
data "gpucluster_node_facts" "gpu02" {
  node = "gpu02"
}
data "gpucluster_node_facts" "login01" {
  node = "login01"
}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.gpu02", tfjsonpath.New("hostname"), knownvalue.StringExact("gpu02")),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.gpu02", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(4)),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.login01", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(0)),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.login01", tfjsonpath.New("os_pretty_name"), knownvalue.StringRegexp(regexp.MustCompile(`trixie`))),
			},
			Check: checkFactsMatchHost(l, "gpu02"),
		}},
	})
}

// checkFactsMatchHost compares recorded facts with what the host reports through the lab seam.
func checkFactsMatchHost(l *lab.Lab, node string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		kernel, err := onHostErr(l, node, "uname -r")
		if err != nil {
			return err
		}
		nproc, err := onHostErr(l, node, "nproc --all")
		if err != nil {
			return err
		}
		// Hosts start bare of Slurm; a test may have installed slurmd since.
		source, err := onHostErr(l, node, "if command -v slurmd >/dev/null; then echo 'slurmd -C'; else echo lscpu; fi")
		if err != nil {
			return err
		}
		for _, rs := range s.RootModule().Resources {
			if rs.Primary.Attributes["hostname"] != node {
				continue
			}
			if got := rs.Primary.Attributes["kernel"]; got != kernel {
				return fmt.Errorf("%s: kernel %q, host says %q", node, got, kernel)
			}
			if got := rs.Primary.Attributes["cpus"]; got != nproc {
				return fmt.Errorf("%s: cpus %q, host says %q", node, got, nproc)
			}
			if got := rs.Primary.Attributes["facts_source"]; got != source {
				return fmt.Errorf("%s: facts_source %q, want %q", node, got, source)
			}
			return nil
		}
		return fmt.Errorf("no resource with hostname %s in state", node)
	}
}

func checkFileContent(l *lab.Lab, node, path, want string) resource.TestCheckFunc {
	return checkOnHost(l, node, "grep -v '^#' "+path, want)
}

// checkNodeReleased: destroy lifts the SSH restriction and the node stays reachable.
func checkNodeReleased(l *lab.Lab, node string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, _, err := l.Exec(context.Background(), node, "test ! -e "+allowGroupsFile); err != nil {
			return fmt.Errorf("%s: %s still present after destroy", node, allowGroupsFile)
		}
		if _, err := onHostErr(l, node, "systemctl is-active ssh"); err != nil {
			return fmt.Errorf("%s: ssh is not active after destroy: %w", node, err)
		}
		return nil
	}
}
