package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/fakehost"
)

// withGPUs makes nvidia-smi on the host list n GPUs, as a canned reply: the fake does not
// model NVIDIA's driver.
func withGPUs(h *fakehost.Host, n int) {
	h.Handle("nvidia-smi", func(c *fakehost.Call) int {
		if len(c.Args) != 2 || c.Args[1] != "-L" {
			return c.NotModelled("nvidia-smi other than -L")
		}
		for i := range n {
			c.Printf("GPU %d: NVIDIA A100-SXM4-40GB (UUID: GPU-%08d-0000-0000-0000-000000000000)\n", i, i)
		}
		return 0
	})
}

func fakeNodeConfig(c *fakeCluster, name, extra string) string {
	return c.provider("") + fmt.Sprintf(`
resource "gpucluster_node" "test" {
  name  = %q
%s
}
`, name, extra)
}

// TestNode_fakeLifecycle is TestAccNode_lifecycle on fake hosts: the facts read from the host,
// roles and the SSH AllowGroups drop-in changed in place (validated with sshd -t, ssh
// reloaded), import, the drop-in removed by hand written again, destroy removing it.
func TestNode_fakeLifecycle(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01", "gpu02")
	withGPUs(c.host("gpu01"), 4)
	const addr = "gpucluster_node.test"
	allow := `  roles = ["compute", "storage"]
  ssh_allow_groups = ["sudo"]`
	sameID := statecheck.CompareValue(compare.ValuesSame())
	reloads := func() int { return c.host("gpu01").Units.Get("ssh").Reloads }
	var reloadsBefore int
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: c.check(func() error {
			if _, err := c.host("gpu01").FS.Stat(allowGroupsFile, false); err == nil {
				return fmt.Errorf("gpu01: %s still present after destroy", allowGroupsFile)
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: fakeNodeConfig(c, "gpu01", `  roles = ["compute"]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("hostname"), knownvalue.StringExact("gpu01")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("os_id"), knownvalue.StringExact("debian")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("os_version_id"), knownvalue.StringExact(fakehost.OSVersionID)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kernel"), knownvalue.StringExact(fakehost.KernelRelease)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("cpus"), knownvalue.Int64Exact(fakehost.CPUs)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("facts_source"), knownvalue.StringExact("lscpu")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(4)),
					sameID.AddStateValue(addr, tfjsonpath.New("id")),
				},
			},
			{
				Config: fakeNodeConfig(c, "gpu01", allow),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("roles"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("compute"), knownvalue.StringExact("storage")})),
					sameID.AddStateValue(addr, tfjsonpath.New("id")),
				},
				Check: c.check(func() error {
					if n := reloads(); n != 1 {
						return fmt.Errorf("gpu01: ssh reloaded %d times, want once", n)
					}
					return c.allowGroups("gpu01", "AllowGroups sudo\n")
				}),
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateIdFunc:       idInState(addr),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"roles"},
			},
			{
				PreConfig: func() { c.run("gpu01", "rm "+allowGroupsFile+" && systemctl reload ssh") },
				Config:    fakeNodeConfig(c, "gpu01", allow),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error { return c.allowGroups("gpu01", "AllowGroups sudo\n") }),
			},
			{
				// A plan that would lock the provider out is refused, and nothing is written.
				PreConfig:   func() { reloadsBefore = reloads() },
				Config:      fakeNodeConfig(c, "gpu01", `  ssh_allow_groups = ["nobody-group"]`),
				ExpectError: regexp.MustCompile(`(?s)SSH Access Would Lock Out The Provider.*nobody-group`),
			},
			{
				// The refused plan left the drop-in and ssh as they were.
				PreConfig: func() {
					if err := c.allowGroups("gpu01", "AllowGroups sudo\n"); err != nil || reloads() != reloadsBefore {
						t.Errorf("a refused plan changed gpu01: %v, ssh reloaded %d times, %d before", err, reloads(), reloadsBefore)
					}
				},
				Config:   fakeNodeConfig(c, "gpu01", allow),
				PlanOnly: true,
			},
		},
	})
}

// allowGroups checks the drop-in's lines that are not comments.
func (c *fakeCluster) allowGroups(node, want string) error {
	r := c.host(node).Run("grep -v '^#' " + allowGroupsFile)
	if r.Stdout != want {
		return fmt.Errorf("%s: %s holds %q (status %d), want %q", node, allowGroupsFile, r.Stdout, r.Status, want)
	}
	return nil
}

// TestNodeFactsDataSource_fake reads two fake hosts' facts: GPUs where nvidia-smi lists them,
// none where it is not installed.
func TestNodeFactsDataSource_fake(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu02")
	withGPUs(c.host("gpu02"), 2)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: c.provider("") + `
data "gpucluster_node_facts" "gpu02" {
  node = "gpu02"
}
data "gpucluster_node_facts" "login01" {
  node = "login01"
}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.gpu02", tfjsonpath.New("hostname"), knownvalue.StringExact("gpu02")),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.gpu02", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(2)),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.gpu02", tfjsonpath.New("cpus"), knownvalue.Int64Exact(fakehost.CPUs)),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.login01", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(0)),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.login01", tfjsonpath.New("os_pretty_name"), knownvalue.StringRegexp(regexp.MustCompile(`trixie`))),
				statecheck.ExpectKnownValue("data.gpucluster_node_facts.login01", tfjsonpath.New("real_memory"), knownvalue.Int64Exact(fakehost.MemTotalKiB/1024)),
			},
		}},
	})
}
