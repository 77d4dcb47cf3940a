package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/fakehost"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// TestSlurmController_fake runs gpucluster_slurm_controller without its activation on fake
// hosts: create installs slurmctld at the archive's version and writes the controller's
// fragment, a setting changes the fragment in place, import. The activation, which needs
// Slurm's own parser (scontrol), is not modelled.
func TestSlurmController_fake(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01")
	config := func(taskPlugin string) string {
		return c.provider("") + fmt.Sprintf(`
resource "gpucluster_munge_key" "test" {
  controller = "login01"
  nodes      = %s
}
resource "gpucluster_slurm_controller" "test" {
  node                 = "login01"
  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = %q
  job_acct_gather_type = "jobacct_gather/none"
  depends_on           = [gpucluster_munge_key.test]
}
`, hclList(c.names), taskPlugin)
	}
	version, _, _ := strings.Cut(fakehost.SlurmVersion, "-")
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("task/none"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("id"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("slurmctld_host"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("version"), knownvalue.StringExact(version)),
					sameID.AddStateValue(slurmControllerAddr, tfjsonpath.New("id")),
				},
				Check: c.check(func() error {
					if v := c.host("login01").Installed("slurmctld"); v != fakehost.SlurmVersion {
						return fmt.Errorf("login01: slurmctld %q installed, want %s", v, fakehost.SlurmVersion)
					}
					return c.fragmentsHold("login01", "SlurmctldHost=login01", "TaskPlugin=task/none")
				}),
			},
			{
				Config: config("task/affinity"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(slurmControllerAddr, tfjsonpath.New("id"))},
				Check:             c.check(func() error { return c.fragmentsHold("login01", "TaskPlugin=task/affinity") }),
			},
			{
				Config:      config("task/nosuch"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`task_plugin`),
			},
		},
	})
}

// fragmentsHold wants each line, whole, in one of the Slurm fragments on node.
func (c *fakeCluster) fragmentsHold(node string, want ...string) error {
	have := map[string]bool{}
	for _, p := range c.host(node).FS.Paths(slurm.FragmentDir) {
		data, err := c.host(node).FS.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			have[l] = true
		}
	}
	for _, w := range want {
		if !have[w] {
			return fmt.Errorf("%s: no fragment in %s has the line %q", node, slurm.FragmentDir, w)
		}
	}
	return nil
}
