package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// TestSlurmPartition_fake defines a GPU node and a partition beside the controller on fake
// hosts: the activation puts both in slurm.conf and gres.conf, and a partition setting changed
// in place reaches slurm.conf with the plan empty after it.
func TestSlurmPartition_fake(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01")
	config := func(maxTime string) string {
		return c.provider("") + fmt.Sprintf(`
resource "gpucluster_munge_key" "test" {
  controller = "login01"
  nodes      = %s
}
resource "gpucluster_slurm_controller" "test" {
  node                 = "login01"
  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = "task/none"
  job_acct_gather_type = "jobacct_gather/none"
  depends_on           = [gpucluster_munge_key.test]
}
resource "gpucluster_slurm_node" "gpu01" {
  controller = gpucluster_slurm_controller.test.id
  name       = "gpu01"
  gres       = "gpu:4"
  gpu_files  = "/dev/nvidia[0-3]"
}
resource "gpucluster_slurm_partition" "gpu" {
  controller      = gpucluster_slurm_controller.test.id
  name            = "gpu"
  nodes           = [gpucluster_slurm_node.gpu01.id]
  default         = true
  max_time        = %q
  allow_groups    = ["users"]
  def_mem_per_gpu = 1000
}
resource "gpucluster_slurm_activation" "test" {
  controller = gpucluster_slurm_controller.test.id
  depends_on = [gpucluster_slurm_node.gpu01, gpucluster_slurm_partition.gpu]
}
`, hclList(c.names), maxTime)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		// Destroy drains gpu01 before its definition goes, and leaves no fragment naming it.
		CheckDestroy: c.check(func() error {
			for _, p := range c.host("login01").FS.Paths(slurm.FragmentDir) {
				if data, err := c.host("login01").FS.ReadFile(p); err == nil && strings.Contains(string(data), "gpu01") {
					return fmt.Errorf("login01: %s still names gpu01 after destroy:\n%s", p, data)
				}
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: config("3-00:00:00"),
				Check: c.check(func() error {
					if err := c.slurmConfHasPartition("login01", "gpu", "Nodes=gpu01"); err != nil {
						return err
					}
					return c.fileHolds("login01", slurm.ConfDir+"/gres.conf", "NodeName=gpu01 Name=gpu File=/dev/nvidia[0-3]")
				}),
			},
			{
				Config: config("1-00:00:00"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_slurm_partition.gpu", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error { return c.slurmConfHasPartition("login01", "gpu", "MaxTime=1-00:00:00") }),
			},
		},
	})
}

// slurmConfHasPartition wants the partition's line in slurm.conf to carry setting.
func (c *fakeCluster) slurmConfHasPartition(node, name, setting string) error {
	r := c.host(node).Run("grep '^PartitionName=" + name + " ' " + slurm.ConfDir + "/slurm.conf")
	if r.Status != 0 {
		return fmt.Errorf("%s: slurm.conf defines no partition %s", node, name)
	}
	for _, w := range strings.Fields(r.Stdout) {
		if w == setting {
			return nil
		}
	}
	return fmt.Errorf("%s: partition %s is %q, want %s", node, name, r.Stdout, setting)
}
