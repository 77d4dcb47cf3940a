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
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/fakehost"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// TestSlurmController_fake runs gpucluster_slurm_controller and its activation on fake hosts:
// create installs slurmctld at the archive's version, writes the controller's fragment and
// activates slurm.conf, starting slurmctld; a setting changes the fragment in place and the
// activation applies it with one restart or reconfigure, and a no-op apply touches nothing; a
// bad task_plugin is refused at plan. The fake checks slurm.conf's syntax only, not that Slurm
// knows each key.
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
resource "gpucluster_slurm_activation" "test" {
  controller = gpucluster_slurm_controller.test.id
}
`, hclList(c.names), taskPlugin)
	}
	version, _, _ := strings.Cut(fakehost.SlurmVersion, "-")
	ctld := func() fakehost.Unit { return c.host("login01").Units.Get("slurmctld") }
	var before fakehost.Unit
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
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					sameID.AddStateValue(slurmControllerAddr, tfjsonpath.New("id")),
				},
				Check: c.check(func() error {
					if v := c.host("login01").Installed("slurmctld"); v != fakehost.SlurmVersion {
						return fmt.Errorf("login01: slurmctld %q installed, want %s", v, fakehost.SlurmVersion)
					}
					if u := ctld(); !u.Active || !u.Enabled {
						return fmt.Errorf("login01: slurmctld is %+v, want active and enabled", u)
					}
					if err := c.fileHolds("login01", slurm.ConfDir+"/slurm.conf", "SlurmctldHost=login01", "TaskPlugin=task/none", "AuthType=auth/munge"); err != nil {
						return err
					}
					return c.fragmentsHold("login01", "SlurmctldHost=login01", "TaskPlugin=task/none")
				}),
			},
			{
				// A no-op apply restarts and reconfigures nothing.
				PreConfig: func() { before = ctld() },
				Config:    config("task/none"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error {
					if after := ctld(); after.Starts != before.Starts || after.Reloads != before.Reloads {
						return fmt.Errorf("login01: a no-op apply touched slurmctld: %+v, before %+v", after, before)
					}
					return nil
				}),
			},
			{
				Config: config("task/affinity"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(slurmControllerAddr, tfjsonpath.New("id"))},
				PreConfig:         func() { before = ctld() },
				Check: c.check(func() error {
					if after := ctld(); after.Starts+after.Reloads != before.Starts+before.Reloads+1 {
						return fmt.Errorf("login01: slurmctld %+v after the change, %+v before; want one restart or reconfigure", after, before)
					}
					return c.fileHolds("login01", slurm.ConfDir+"/slurm.conf", "TaskPlugin=task/affinity")
				}),
			},
			{
				Config:      config("task/nosuch"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`task_plugin`),
			},
		},
	})
}

// fileHolds wants each line, whole, in the file on node.
func (c *fakeCluster) fileHolds(node, file string, want ...string) error {
	data, err := c.host(node).FS.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%s: %w", node, err)
	}
	have := strings.Split(string(data), "\n")
	for _, w := range want {
		if !slices.Contains(have, w) {
			return fmt.Errorf("%s: %s lacks the line %q:\n%s", node, file, w, data)
		}
	}
	return nil
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
