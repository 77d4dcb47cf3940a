package provider

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
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

// adoptSlurm declares the Slurm part of what tools/lab-build-by-hand.sh built, as an admin
// adopting it writes it: the guide's values, the lab's plugins, no MailProg line (the
// guide's listing has none), one node resource per GPU server although slurm.conf defines
// them on one hostlist line. %[1]d is the partition's DefMemPerGPU as the script wrote it,
// %[2]s the nodes' drain reasons, an HCL map.
const adoptSlurm = `
locals {
  gpus   = [for n in local.nodes : n if n != "login01"]
  drains = %[2]s
}

resource "gpucluster_slurm_controller" "cluster" {
  node                 = "login01"
  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = "task/none"
  job_acct_gather_type = "jobacct_gather/none"
  mail_prog            = ""
  depends_on           = [gpucluster_munge_key.cluster]
}

resource "gpucluster_slurm_node" "gpu" {
  for_each   = toset(local.gpus)
  controller = gpucluster_slurm_controller.cluster.id
  name       = each.key
  gres       = "gpu:4"
  gpu_files    = "/dev/nvidia[0-3]"
  drain_reason = lookup(local.drains, each.key, null)
}

resource "gpucluster_slurm_partition" "gpu" {
  controller      = gpucluster_slurm_controller.cluster.id
  name            = "gpu"
  nodes           = [for n in gpucluster_slurm_node.gpu : n.id]
  default         = true
  max_time        = "3-00:00:00"
  allow_groups    = ["users"]
  def_mem_per_gpu = %[1]d
}

resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id
  depends_on = [gpucluster_slurm_node.gpu, gpucluster_slurm_partition.gpu]
}

resource "gpucluster_slurm_compute" "gpu" {
  for_each   = gpucluster_slurm_node.gpu
  node       = each.value.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster, gpucluster_firewall.node]
}
`

// adoptSlurmImports are the import blocks of the Slurm part.
var adoptSlurmImports = importBlock("gpucluster_slurm_controller.cluster", `"login01"`) +
	importEach("toset(local.gpus)", "gpucluster_slurm_node.gpu", `"${each.key}@login01"`) +
	importBlock("gpucluster_slurm_partition.gpu", `"gpu@login01"`) +
	importBlock("gpucluster_slurm_activation.cluster", `"login01"`) +
	importEach("toset(local.gpus)", "gpucluster_slurm_compute.gpu", "each.key")

// adoptSlurmRelease hands the Slurm part back with the rest.
var adoptSlurmRelease = released("gpucluster_slurm_controller.cluster", "gpucluster_slurm_node.gpu",
	"gpucluster_slurm_partition.gpu", "gpucluster_slurm_activation.cluster", "gpucluster_slurm_compute.gpu")

// The whole adoption: the cluster built by the guide's commands, its hand-written
// slurm.conf (gpu[01-02] on one line), cgroup.conf, gres.conf and /etc/default/slurmd
// included, imports with a plan that changes only the ledger lines of the firewall rules, users and groups; neither the
// import nor the apply after it changes a file under /etc or restarts slurmctld, slurmd or
// munged on any host. Then gpu03, a bare
// server, joins through the provider: the first Slurm change writes the provider's fragments
// from the hand-written files, and gpu03 runs a job.
func TestAccAdopt_handBuiltSlurm(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	const added = "gpu03"
	if slices.Contains(nodes, added) {
		t.Fatalf("the lab already has %s; this test adds it to a lab as `make lab-up` starts it", added)
	}
	buildByHand(t, l)
	defMem, err := strconv.Atoi(onHost(t, l, "login01", `sed -n 's/.*DefMemPerGPU=\([0-9]*\).*/\1/p' `+slurm.ConfDir+"/slurm.conf"))
	if err != nil {
		t.Fatalf("DefMemPerGPU of the hand-written slurm.conf: %v", err)
	}
	config := func(l *lab.Lab, nodes []string, drains string) string {
		return providerConfig(l, "") + adoptTable(nodes) + adoptResources + fmt.Sprintf(adoptSlurm, defMem, drains)
	}
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "WARN")
	grown := labWith(t, l, added)
	all := append(slices.Clone(nodes), added)
	var found, imported, daemons string
	var etcBefore, cursors map[string]string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			// Released, the cluster runs on as the provider left it.
			return checkNodeStates(l, "gpu01:idle\ngpu02:idle\ngpu03:idle")(nil)
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() { found = hostSnapshot(t, l, false) },
				Config:    config(l, nodes, "{}") + adoptImports + adoptSlurmImports,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{importRecordsLedgersOnly{}},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_node.gpu[\"gpu02\"]", tfjsonpath.New("cpus"), knownvalue.Int64Func(positive)),
					statecheck.ExpectKnownValue("gpucluster_slurm_activation.cluster", tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					hostCheck(func() error {
						imported = hostSnapshot(t, l, true)
						return sameSnapshot("the import", found, hostSnapshot(t, l, false))
					}),
				},
			},
			{
				Config: config(l, nodes, "{}"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{hostCheck(func() error {
					if err := sameSnapshot("the apply after the import", imported, hostSnapshot(t, l, true)); err != nil {
						return err
					}
					out, err := onHostErr(l, "login01", "ls -A "+slurm.FragmentDir+" 2>/dev/null; head -c 12 "+slurm.ConfDir+"/slurm.conf")
					if err != nil {
						return err
					}
					if out != "ClusterName=" {
						return fmt.Errorf("after the import the controller must keep its hand-written slurm.conf and no fragment: %q", out)
					}
					return nil
				})},
			},
			{
				// The first Slurm change, a drain, is no change of slurm.conf: the fragments
				// read from the hand-written files go on disk and the files are rewritten from
				// them, with no daemon restarted or reconfigured (a reconfigure re-executes
				// slurmctld and slurmd, which changes their MainPID).
				PreConfig: func() { daemons = daemonStates(t, l) },
				Config:    config(l, nodes, `{ gpu02 = "adoption test" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_activation.cluster", tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.NoChange.String())),
					hostCheck(func() error {
						return checkLogHas(logFile, "Hand-Written Slurm Files Will Be Rewritten")
					}),
					hostCheck(func() error {
						return checkLogHas(logFile, "The settings Slurm runs with stay the same: no daemon is restarted or reconfigured for the new layout.")
					}),
					hostCheck(func() error {
						return checkLogHas(logFile, "Debian's "+slurm.PlugstackPath+", whose include fails at every start of slurmctld and loads no plugin, is replaced")
					}),
					hostCheck(func() error { return sameSnapshot("rewriting into the provider's layout", daemons, daemonStates(t, l)) }),
					hostCheck(func() error { return checkAdoptedFragments(l, nodes[1:]) }),
					hostCheck(func() error {
						return checkSlurmConfRegexp(l, `(?s)^# Managed by terraform-provider-gpucluster.*\nNodeName=gpu\[01-02\] `)(nil)
					}),
					hostCheck(func() error { return checkNodeStates(l, "gpu01:idle\ngpu02:drained")(nil) }),
				},
			},
			{
				// gpu03 joins the lab bare, as the add-gpu-servers test does; the lab's new line
				// in every /etc/hosts is not the provider's, so /etc is compared from then on.
				PreConfig: func() {
					addLabHost(t, l, added)
					etcBefore = etcChecksums(t, l, nodes[1:])
					cursors = journalCursors(t, l, all)
				},
				Config: config(grown, all, "{}"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_controller.cluster", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu[\"gpu01\"]", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu[\"gpu03\"]", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("gpucluster_slurm_partition.gpu", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_slurm_compute.gpu[\"gpu03\"]", plancheck.ResourceActionCreate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				// Check would take the state in the legacy form, which has no for_each keys.
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_activation.cluster", tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.OrderedRestart.String())),
					// Counted first, before a check could start anything: one ordered restart.
					hostCheck(func() error { return checkStarts(l, cursors, "slurmctld", map[string]int{"login01": 1}) }),
					hostCheck(func() error {
						return checkStarts(l, cursors, "slurmd", map[string]int{"gpu01": 1, "gpu02": 1, "gpu03": 1})
					}),
					hostCheck(func() error { return checkNodeStates(l, "gpu01:idle\ngpu02:idle\ngpu03:idle")(nil) }),
					hostCheck(func() error { return checkSlurmConfRegexp(l, `(?m)^PartitionName=gpu Nodes=gpu\[01-03\] `)(nil) }),
					hostCheck(func() error { return checkAdoptedFragments(l, all[1:]) }),
					hostCheck(func() error { return checkEtcUnchanged(l, etcBefore) }),
					hostCheck(func() error { return checkJobOn(l, "alice", added) }),
				},
			},
			{
				Config: providerConfig(grown, "") + adoptRelease + adoptSlurmRelease,
				Check:  handedOver(l),
			},
		},
	})
}

// daemonStates are the MainPID and start time of munged, slurmctld and slurmd on every host.
func daemonStates(t *testing.T, l *lab.Lab) string {
	t.Helper()
	var b strings.Builder
	for _, n := range labNodeNames(l) {
		fmt.Fprintf(&b, "== %s\n%s\n", n, onHost(t, l, n,
			"for u in munge slurmctld slurmd; do systemctl show -p Id -p ExecMainStartTimestampMonotonic -p MainPID \"$u.service\"; done"))
	}
	return b.String()
}

// checkAdoptedFragments wants the provider's layout on the controller: a fragment for the
// controller, the partition and every node, the hand-written ones included.
func checkAdoptedFragments(l *lab.Lab, gpus []string) error {
	out, err := onHostErr(l, "login01", "ls "+slurm.FragmentDir)
	if err != nil {
		return err
	}
	want := []string{slurm.ControllerFile, slurm.PartitionFile("gpu")}
	for _, n := range gpus {
		want = append(want, slurm.NodeFile(n))
	}
	slices.Sort(want)
	if got := strings.Fields(out); !slices.Equal(got, want) {
		return fmt.Errorf("fragments on login01: %v, want %v", got, want)
	}
	return nil
}

// checkJobOn runs a one-GPU job as user on node and wants it to print the node's name.
func checkJobOn(l *lab.Lab, user, node string) error {
	out, err := onHostErr(l, "login01", fmt.Sprintf("cd /tmp && timeout 60 runuser -u %s -- srun -w %s --gres=gpu:1 -t 1 hostname", user, node))
	if err != nil {
		return err
	}
	if out != node {
		return fmt.Errorf("srun -w %s printed %q", node, out)
	}
	return nil
}
