package provider

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// TestAccSlurmCluster_gpuJobs builds the guide's whole Slurm setup on the lab, runs the
// guide's GPU-job test as a cluster user, imports every resource, refuses P3, P14 and a
// DefMemPerGPU above the node's memory at plan time, and repairs a compute node broken by hand.
func TestAccSlurmCluster_gpuJobs(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	base := labCluster{computeNodes: gpus}
	var slurmdSince string
	t.Cleanup(func() { _ = cancelJobs(l)(nil) })
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "WARN")
	// base with one more partition on gpu01, named name, with the extra arguments.
	withPartition := func(name, extra string) labCluster {
		c := base
		c.activationDeps = []string{"gpucluster_slurm_partition." + name}
		c.extra = fmt.Sprintf(`
resource "gpucluster_slurm_partition" %[1]q {
  controller = gpucluster_slurm_controller.test.id
  name       = %[1]q
  nodes      = [gpucluster_slurm_node.gpu01.id]
  %[2]s
}
`, name, extra)
		return c
	}
	p4 := withPartition("nomem", "")
	// More memory per GPU than the node has: no one-GPU job without --mem could ever start.
	oversized := withPartition("oversized", "def_mem_per_gpu = 99999999")

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkClusterDestroyed(l, gpus),
		Steps: []resource.TestStep{
			{
				Config: base.config(l),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_node.gpu01", tfjsonpath.New("cpus"), knownvalue.Int64Func(positive)),
					statecheck.ExpectKnownValue("gpucluster_slurm_node.gpu01", tfjsonpath.New("real_memory"), knownvalue.Int64Func(positive)),
					statecheck.ExpectKnownValue("gpucluster_slurm_compute.gpu01", tfjsonpath.New("nvml_plugin"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("gpucluster_slurm_compute.gpu02", tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue("gpucluster_slurm_partition.gpu", tfjsonpath.New("nodes"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("gpu01"), knownvalue.StringExact("gpu02")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSinfo(l, "2:idle"),
					checkSlurmConfRegexp(l, `(?m)^NodeName=gpu\[01-02\] CPUs=\d+ Boards=1 SocketsPerBoard=\d+ CoresPerSocket=\d+ ThreadsPerCore=\d+ RealMemory=\d+ Gres=gpu:4 State=UNKNOWN$`),
					checkSlurmConf(l, "PartitionName=gpu Nodes=gpu[01-02] Default=YES MaxTime=3-00:00:00 State=UP AllowGroups=users DefMemPerGPU=1000"),
					checkFileLines(l, slurm.ConfDir+"/gres.conf", "NodeName=gpu[01-02] Name=gpu File=/dev/nvidia[0-3]"),
					checkConfigless(l, gpus),
					checkGPUJobs(l, "gpu01"),
					checkMultiNode(l),
				),
			},
			// Both by the id their state shows, the bare name, found on the provider's login_node.
			{ResourceName: "gpucluster_slurm_node.gpu01", ImportState: true, ImportStateIdFunc: idInState("gpucluster_slurm_node.gpu01"), ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ImportStateVerifyIgnore: []string{"facts_source"}},
			{ResourceName: "gpucluster_slurm_partition.gpu", ImportState: true, ImportStateIdFunc: idInState("gpucluster_slurm_partition.gpu"), ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name"},
			{ResourceName: "gpucluster_slurm_partition.gpu", ImportState: true, ImportStateId: "gpu@login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name"},
			{ResourceName: "gpucluster_slurm_compute.gpu02", ImportState: true, ImportStateIdFunc: idInState("gpucluster_slurm_compute.gpu02"), ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "node"},
			{
				// Broken by hand: slurmd's options deleted and a local slurm.conf left on gpu02,
				// slurmd stopped on gpu01, the partition's fragment edited on login01.
				PreConfig: func() {
					onHost(t, l, "gpu02", "rm "+slurm.SlurmdDefaultsPath+" && mkdir -p "+slurm.ConfDir+" && echo ClusterName=stale > "+slurm.ConfDir+"/slurm.conf")
					onHost(t, l, "gpu01", "systemctl stop slurmd")
					onHost(t, l, "login01", "sed -i 's/^MaxTime=.*/MaxTime=1-00:00:00/' "+slurm.FragmentDir+"/"+slurm.PartitionFile("gpu"))
				},
				Config: base.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_compute.gpu01", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_slurm_compute.gpu02", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_slurm_partition.gpu", plancheck.ResourceActionUpdate),
						expectPriorString("gpucluster_slurm_partition.gpu", "max_time", regexp.MustCompile(`^1-00:00:00$`)),
						expectPriorString(slurmActivationAddr, "status", regexp.MustCompile(`^activation pending \(reconfigure\): partition gpu changed$`)),
						expectPriorString("gpucluster_slurm_compute.gpu01", "status", regexp.MustCompile(`^slurmd is not running$`)),
						expectPriorString("gpucluster_slurm_compute.gpu02", "status", regexp.MustCompile(`^/etc/default/slurmd is missing; a local /etc/slurm/slurm.conf exists$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkSinfo(l, "2:idle"), checkConfigless(l, gpus),
					checkSlurmConf(l, "PartitionName=gpu Nodes=gpu[01-02] Default=YES MaxTime=3-00:00:00 State=UP AllowGroups=users DefMemPerGPU=1000")),
			},
			{
				// P3: more memory than the node reports is refused before anything changes.
				Config:      labCluster{computeNodes: gpus, nodeExtra: map[string]string{"gpu01": "  real_memory = 99999999\n"}}.config(l),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)RealMemory Above What The Node Reports.*RealMemory=99999999 is above.*Do not round RealMemory up`),
			},
			{
				// P14: a partition naming a node no gpucluster_slurm_node defines.
				Config:      labCluster{computeNodes: gpus, partitionNodes: `["gpu01", "gpu09"]`}.config(l),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Partition Names An Undefined Node.*gpucluster_slurm_node\.NAME\.id.*gpu09, which no node definition defines`),
			},
			{
				Config:      oversized.config(l),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Slurm Configuration Refused.*DefMemPerGPU=99999999 MB is above.*gpu01's.*RealMemory=`),
			},
			{
				// P4: a GPU partition without a memory default is applied, with a warning.
				Config: p4.config(l),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "PartitionName=nomem Nodes=gpu01 State=UP"),
					func(*terraform.State) error {
						return checkLogHas(logFile, "The first one-GPU job then blocks every other job on that node")
					},
				),
			},
			{
				// Removing a node is an ordered restart: slurmd restarts on gpu01, and the job
				// running there survives it.
				PreConfig: func() {
					startLongJob(t, l, "gpu01")
					slurmdSince = onHost(t, l, "gpu01", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value")
				},
				Config: labCluster{computeNodes: gpus[:1]}.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu02", plancheck.ResourceActionDestroy),
						plancheck.ExpectResourceAction("gpucluster_slurm_compute.gpu02", plancheck.ResourceActionDestroy),
						plancheck.ExpectResourceAction("gpucluster_slurm_partition.gpu", plancheck.ResourceActionUpdate),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSinfo(l, "1:mixed"),
					checkSlurmConfRegexp(l, `(?m)^NodeName=gpu01 CPUs=`),
					func(*terraform.State) error {
						if now := onHost(t, l, "gpu01", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value"); now == slurmdSince {
							return fmt.Errorf("slurmd on gpu01 was not restarted after the node set changed")
						}
						return checkLogHas(logFile, "is an ordered restart")
					},
					checkLongJobRunning(l, "gpu01"),
				),
			},
			{
				// gpu02 back: the node set changes again, and the cluster ends as it started.
				Config:           base.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            resource.ComposeAggregateTestCheckFunc(checkLongJobRunning(l, "gpu01"), cancelJobs(l), checkSinfo(l, "2:idle")),
			},
			{
				// slurmd's port is read by every daemon at start only: an ordered restart, after
				// which slurmd listens on the new port and the controller reaches both nodes there.
				Config: labCluster{computeNodes: gpus, controllerExtra: "  slurmd_port = 6819\n"}.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.OrderedRestart.String())),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "SlurmdPort=6819"),
					checkListening(l, gpus, 6819),
					checkSinfo(l, "2:idle"),
					checkMultiNode(l),
				),
			},
		},
	})
}

// checkListening wants slurmd listening on port on every node.
func checkListening(l *lab.Lab, nodes []string, port int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range nodes {
			out, err := onHostErr(l, n, fmt.Sprintf("ss -Hltnp 'sport = :%d'", port))
			if err != nil {
				return err
			}
			if !strings.Contains(out, "slurmd") {
				return fmt.Errorf("%s: slurmd does not listen on %d: %q", n, port, out)
			}
		}
		return nil
	}
}

// TestAccSlurmCompute_beforePartition sets up a compute node that no partition lists yet:
// sinfo does not show such a node, scontrol show node does, so the apply sees it register
// instead of timing out.
func TestAccSlurmCompute_beforePartition(t *testing.T) {
	l := lab.Require(t)
	config := slurmControllerConfig(l, "") + slurmActivationConfig("gpucluster_slurm_node.gpu01") + `
resource "gpucluster_slurm_node" "gpu01" {
  controller = gpucluster_slurm_controller.test.id
  name       = "gpu01"
  gres       = "gpu:4"
  gpu_files  = "/dev/nvidia[0-3]"
}

resource "gpucluster_slurm_compute" "gpu01" {
  node       = gpucluster_slurm_node.gpu01.id
  controller = gpucluster_slurm_controller.test.slurmctld_host
  depends_on = [gpucluster_munge_key.test, gpucluster_slurm_activation.test]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkClusterDestroyed(l, []string{"gpu01"}),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_slurm_compute.gpu01", tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error {
					out, err := onHostErr(l, "login01", "sinfo -a -h -N -n gpu01 -o %T; scontrol show node -o gpu01")
					if err != nil {
						return err
					}
					if !strings.HasPrefix(out, "NodeName=gpu01 ") || !regexp.MustCompile(`State=IDLE `).MatchString(out) {
						return fmt.Errorf("want gpu01 idle in scontrol and absent from sinfo (no partition), got:\n%s", out)
					}
					return nil
				},
			),
		}},
	})
}
