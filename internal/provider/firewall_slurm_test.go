package provider

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// guideFirewallTable is examples/cluster/firewall.tf for the lab: the guide's table as data,
// one rule per row and node of the row's group, and UFW enabled on every node after its
// rules. slurmdFrom is the source of the slurmd row (the guide's: the subnet). count stands
// in for the example's for_each: the test framework's Check functions cannot read string keys.
func guideFirewallTable(l *lab.Lab, gpus []string, slurmdFrom string) string {
	return fmt.Sprintf(`
locals {
  fw_groups = {
    controller     = ["login01"]
    compute        = %[1]s
    beegfs_storage = %[1]s
    all            = %[2]s
  }
  fw_table = %[3]s
  fw_rows = flatten([
    for row in local.fw_table : [for node in local.fw_groups[row.group] : merge(row, { node = node })]
  ])
  fw_nodes = %[2]s
}

resource "gpucluster_firewall_rule" "table" {
  count = length(local.fw_rows)

  node    = local.fw_rows[count.index].node
  port    = local.fw_rows[count.index].port
  proto   = local.fw_rows[count.index].proto
  from    = local.fw_rows[count.index].src
  comment = local.fw_rows[count.index].comment
}

resource "gpucluster_firewall" "node" {
  count = length(local.fw_nodes)

  node             = local.fw_nodes[count.index]
  rules            = [for r in gpucluster_firewall_rule.table : r.id if r.node == local.fw_nodes[count.index]]
  slurm_controller = gpucluster_slurm_controller.test.id
}
`, hclList(gpus), hclList(labNodeNames(l)), guideFirewallRows(slurmdFrom))
}

// TestAccFirewall_slurmThroughUFW applies the guide's Slurm setup and its firewall table to
// every lab node, then re-runs the guide's verification with UFW filtering: nodes idle, two
// one-GPU jobs side by side as the cluster user, srun -N2, while an unlisted port is dropped
// and SSH reaches a GPU server only from login01. Before that, a plan with slurmd open to
// login01 only and a controller without SrunPortRange warns about pitfalls P5 and P6.
func TestAccFirewall_slurmThroughUFW(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	cluster := labCluster{computeNodes: gpus}.config(l)
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "WARN")
	t.Cleanup(func() {
		_ = cancelJobs(l)(nil)
		_, _ = onHostErr(l, "gpu01", "test -e /run/tacc-nc.pid && kill $(cat /run/tacc-nc.pid); rm -f /run/tacc-nc.pid")
	})

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeAggregateTestCheckFunc(checkUFWInactiveEverywhere(l), checkClusterDestroyed(l, gpus)),
		Steps: []resource.TestStep{
			{
				Config: cluster,
				Check:  checkSinfo(l, "2:idle"),
			},
			{
				// P5 and P6 at plan: slurmd open to login01 only, and SrunPortRange removed by hand.
				PreConfig: func() {
					onHost(t, l, "login01", "sed -i '/^SrunPortRange=/d' "+slurm.ConfDir+"/slurm.conf")
				},
				Config:             cluster + guideFirewallTable(l, gpus, "10.0.0.10"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() {
					for _, warning := range []string{
						"gpu01 runs slurmd, but no allow rule admits 6818/tcp from the whole cluster subnet 10.0.0.0/24",
						"UFW on gpu02 would deny incoming traffic, but the controller's slurm.conf sets no SrunPortRange",
					} {
						if err := checkLogHas(logFile, warning); err != nil {
							t.Fatal(err)
						}
					}
					onHost(t, l, "gpu01", "setsid nc -lk 5555 </dev/null >/dev/null 2>&1 & echo $! > /run/tacc-nc.pid")
					// nc listens a moment after it starts: wait for that on gpu01 itself, so the
					// check from gpu02 below tests the network, not the start.
					onHost(t, l, "gpu01", "i=0; until nc -z -w 1 127.0.0.1 5555; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.05; done")
					if err := checkReachable(l, "gpu02", "10.0.0.11", "5555", true)(nil); err != nil {
						t.Fatalf("the listener must answer before the firewall is enabled: %v", err)
					}
				},
				Config: cluster + guideFirewallTable(l, gpus, "10.0.0.0/24"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkUFWActiveEverywhere(l),
					checkSlurmConfRegexp(l, `(?m)^SrunPortRange=60001-61000$`),
					checkSinfo(l, "2:idle"),
					checkGPUJobs(l, "gpu01"),
					checkMultiNode(l),
					checkReachable(l, "gpu02", "10.0.0.11", "5555", false),
					checkReachable(l, "login01", "10.0.0.11", "22", true),
					checkReachable(l, "gpu02", "10.0.0.11", "22", false),
					checkNoDialFromHere("10.0.0.11:22"),
				),
			},
		},
	})
}

func checkUFWActiveEverywhere(l *lab.Lab) resource.TestCheckFunc {
	return checkUFWEverywhere(l, "Status: active")
}

// checkUFWInactiveEverywhere: other tests share the lab and expect UFW off.
func checkUFWInactiveEverywhere(l *lab.Lab) resource.TestCheckFunc {
	return checkUFWEverywhere(l, "Status: inactive")
}

func checkUFWEverywhere(l *lab.Lab, want string) resource.TestCheckFunc {
	var checks []resource.TestCheckFunc
	for _, n := range labNodeNames(l) {
		checks = append(checks, checkUFWStatus(l, n, want))
	}
	return resource.ComposeAggregateTestCheckFunc(checks...)
}

// checkNoDialFromHere wants addr unreachable from the machine running the tests.
func checkNoDialFromHere(addr string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err == nil {
			_ = conn.Close()
			return fmt.Errorf("%s is reachable from the test machine, want it dropped by the firewall", addr)
		}
		if !strings.Contains(err.Error(), "timeout") {
			return fmt.Errorf("dialing %s: %w; want a timeout (a dropped packet)", addr, err)
		}
		return nil
	}
}
