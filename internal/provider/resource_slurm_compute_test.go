package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// The cluster user of the GPU-job test: in group users, as the guide's AllowGroups wants.
const (
	slurmTestUser = "tacc_slurm_alice"
	slurmTestUID  = 1801
)

// labCluster is the guide's Slurm setup on the lab: controller on login01, the GPU servers as
// nodes with the stand-in GPUs, one partition, configless compute nodes, and alice.
type labCluster struct {
	computeNodes []string
	// nodeExtra is added to one node's resource, by node.
	nodeExtra map[string]string
	// partitionNodes overrides the partition's node list, HCL.
	partitionNodes string
	// extra is appended to the configuration.
	extra string
	// controllerExtra is added to the controller's resource.
	controllerExtra string
	// activationDeps are the resources of extra that the activation depends on too.
	activationDeps []string
}

func (c labCluster) config(l *lab.Lab) string {
	var b strings.Builder
	b.WriteString(slurmControllerConfig(l, c.controllerExtra))
	var ids []string
	for _, n := range c.computeNodes {
		fmt.Fprintf(&b, `
resource "gpucluster_slurm_node" %[1]q {
  controller = gpucluster_slurm_controller.test.id
  name       = %[1]q
  gres       = "gpu:4"
  gpu_files  = "/dev/nvidia[0-3]"
%[2]s}

resource "gpucluster_slurm_compute" %[1]q {
  node       = gpucluster_slurm_node.%[1]s.id
  controller = gpucluster_slurm_controller.test.slurmctld_host
  depends_on = [gpucluster_munge_key.test, gpucluster_slurm_activation.test]
}
`, n, c.nodeExtra[n])
		ids = append(ids, fmt.Sprintf("gpucluster_slurm_node.%s.id", n))
	}
	deps := append([]string{"gpucluster_slurm_partition.gpu"}, c.activationDeps...)
	for _, n := range c.computeNodes {
		deps = append(deps, "gpucluster_slurm_node."+n)
	}
	b.WriteString(slurmActivationConfig(deps...))
	nodes := "[" + strings.Join(ids, ", ") + "]"
	if c.partitionNodes != "" {
		nodes = c.partitionNodes
	}
	fmt.Fprintf(&b, `
resource "gpucluster_slurm_partition" "gpu" {
  controller      = gpucluster_slurm_controller.test.id
  name            = "gpu"
  nodes           = %s
  default         = true
  max_time        = "3-00:00:00"
  allow_groups    = ["users"]
  def_mem_per_gpu = 1000
}

resource "gpucluster_user" "alice" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = %s
}
%s`, nodes, slurmTestUser, slurmTestUID, hclList(labNodeNames(l)), c.extra)
	return b.String()
}

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
	p4 := base
	p4.activationDeps = []string{"gpucluster_slurm_partition.nomem"}
	p4.extra = `
resource "gpucluster_slurm_partition" "nomem" {
  controller = gpucluster_slurm_controller.test.id
  name       = "nomem"
  nodes      = [gpucluster_slurm_node.gpu01.id]
}
`

	// More memory per GPU than the node has: no one-GPU job without --mem could ever start.
	oversized := base
	oversized.activationDeps = []string{"gpucluster_slurm_partition.oversized"}
	oversized.extra = `
resource "gpucluster_slurm_partition" "oversized" {
  controller      = gpucluster_slurm_controller.test.id
  name            = "oversized"
  nodes           = [gpucluster_slurm_node.gpu01.id]
  def_mem_per_gpu = 99999999
}
`

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
			{ResourceName: "gpucluster_slurm_node.gpu01", ImportState: true, ImportStateId: "gpu01@login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ImportStateVerifyIgnore: []string{"facts_source"}},
			{ResourceName: "gpucluster_slurm_partition.gpu", ImportState: true, ImportStateId: "gpu@login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name"},
			{ResourceName: "gpucluster_slurm_compute.gpu02", ImportState: true, ImportStateId: "gpu02", ImportStateVerify: true,
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

func positive(v int64) error {
	if v <= 0 {
		return fmt.Errorf("%d is not positive", v)
	}
	return nil
}

// checkSinfo polls sinfo on login01 until it shows want (as %D:%T), for at most a minute:
// after a restart of slurmctld nodes show unk for a few seconds.
func checkSinfo(l *lab.Lab, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", "sinfo -a -h -o %D:%T")
			if err != nil {
				return err
			}
			if out != want {
				return fmt.Errorf("sinfo -a -h -o %%D:%%T = %q, want %q", out, want)
			}
			return nil
		})
	}
}

// pollLab retries check with a short backoff until it passes or timeout ends.
func pollLab(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

func checkSlurmConfRegexp(l *lab.Lab, pattern string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		content, err := onHostErr(l, "login01", "cat "+slurm.ConfDir+"/slurm.conf")
		if err != nil {
			return err
		}
		if !regexp.MustCompile(pattern).MatchString(content) {
			return fmt.Errorf("slurm.conf on login01 has no match for %s:\n%s", pattern, content)
		}
		return nil
	}
}

// checkConfigless wants the guide's one line in /etc/default/slurmd and no slurm.conf on
// each compute node.
func checkConfigless(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range nodes {
			out, err := onHostErr(l, n, "cat "+slurm.SlurmdDefaultsPath+"; test ! -e "+slurm.ConfDir+"/slurm.conf && echo no-local-conf; systemctl is-active slurmd")
			if err != nil {
				return err
			}
			if want := "SLURMD_OPTIONS=\"--conf-server login01:6817\"\nno-local-conf\nactive"; out != want {
				return fmt.Errorf("%s: %q, want %q", n, out, want)
			}
		}
		return nil
	}
}

// checkGPUJobs is the guide's test, as the cluster user: two single-GPU jobs without --mem
// run at the same time on one node, and each sees exactly one GPU, a different one. The jobs
// sleep inside (their runtime, not a wait of the test); the test polls squeue and cancels
// them when done.
func checkGPUJobs(l *lab.Lab, node string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		dir := "/tmp/" + slurmTestUser + "-jobs"
		start := fmt.Sprintf(`set -u
rm -rf %[1]s && mkdir -m 0777 %[1]s && cd /tmp
for i in 1 2; do
	runuser -u %[2]s -- setsid srun -w %[3]s --gres=gpu:1 -J gpujob$i -t 2 sh -c 'echo "gpu $CUDA_VISIBLE_DEVICES"; exec sleep 60' > %[1]s/job$i.out 2>&1 < /dev/null &
done
`, dir, slurmTestUser, node)
		if _, err := onHostErr(l, "login01", start); err != nil {
			return err
		}
		defer func() { _, _ = onHostErr(l, "login01", "scancel -u "+slurmTestUser+"; rm -rf "+dir) }()
		err := pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", "squeue -u "+slurmTestUser+" -h -t RUNNING -o %j:%N | sort; grep -h '^gpu ' "+dir+"/job1.out "+dir+"/job2.out")
			if err != nil {
				return err
			}
			lines := strings.Split(out, "\n")
			if len(lines) != 4 || lines[0] != "gpujob1:"+node || lines[1] != "gpujob2:"+node {
				why, _ := onHostErr(l, "login01", "squeue -a -o '%i %j %T %r %N %m %b'; scontrol show node "+node+" | grep -E 'TRES|State'")
				return fmt.Errorf("want gpujob1 and gpujob2 RUNNING on %s together, each printing its GPU; got:\n%s\n%s", node, out, why)
			}
			a, b := strings.Fields(lines[2]), strings.Fields(lines[3])
			if len(a) != 2 || len(b) != 2 || strings.Contains(a[1], ",") || strings.Contains(b[1], ",") || a[1] == b[1] {
				return fmt.Errorf("each job must see exactly one GPU, a different one (CUDA_VISIBLE_DEVICES):\n%s", out)
			}
			return nil
		})
		return err
	}
}

// checkMultiNode is the guide's `srun -N2 hostname`, as the cluster user.
func checkMultiNode(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", "cd /tmp && timeout 60 runuser -u "+slurmTestUser+" -- srun -N2 --gres=gpu:1 -t 1 hostname | sort")
		if err != nil {
			return err
		}
		if out != "gpu01\ngpu02" {
			return fmt.Errorf("srun -N2 hostname: %q, want gpu01 and gpu02", out)
		}
		return nil
	}
}

// startLongJob starts a job as the cluster user on node that outlives the steps it must
// survive, and returns once it runs.
func startLongJob(t *testing.T, l *lab.Lab, node string) {
	t.Helper()
	onHost(t, l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- setsid srun -w %s --gres=gpu:1 -J survivor -t 4 sleep 230 > /dev/null 2>&1 < /dev/null &", slurmTestUser, node))
	if err := checkLongJobRunning(l, node)(nil); err != nil {
		t.Fatal(err)
	}
}

func checkLongJobRunning(l *lab.Lab, node string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return pollLab(30*time.Second, func() error {
			out, err := onHostErr(l, "login01", "squeue -u "+slurmTestUser+" -h -n survivor -o %T:%N")
			if err != nil {
				return err
			}
			if out != "RUNNING:"+node {
				return fmt.Errorf("job survivor: %q, want RUNNING:%s", out, node)
			}
			return nil
		})
	}
}

func cancelJobs(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := onHostErr(l, "login01", "command -v scancel >/dev/null || exit 0; scancel -u "+slurmTestUser+" 2>/dev/null; true")
		return err
	}
}

func checkLogHas(file, text string) error {
	content, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.Join(strings.Fields(string(content)), " "), text) {
		return fmt.Errorf("the Terraform log has no warning %q", text)
	}
	return nil
}

// checkClusterDestroyed wants slurmd stopped on the compute nodes, no fragment left on the
// controller, slurmctld stopped, and MUNGE still running.
func checkClusterDestroyed(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, n := range nodes {
			out, err := onHostErr(l, n, "systemctl is-active slurmd || true")
			if err != nil {
				return err
			}
			if out == "active" {
				return fmt.Errorf("slurmd still runs on %s after destroy", n)
			}
		}
		out, err := onHostErr(l, "login01", "ls "+slurm.FragmentDir+" 2>/dev/null | wc -l")
		if err != nil {
			return err
		}
		if out != "0" {
			return fmt.Errorf("%s fragments left on login01 after destroy", out)
		}
		return checkControllerDestroyed(l)(s)
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
