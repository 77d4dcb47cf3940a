package provider

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

const rollingAddr = "gpucluster_rolling_reboot.gpus"

func rollingCluster(trigger string) labCluster {
	return rollingClusterOf(`["gpu01", "gpu02"]`, trigger)
}

func rollingClusterOf(nodes, trigger string) labCluster {
	return rollingClusterWith(nodes, trigger, "3m")
}

func rollingClusterWith(nodes, trigger, bootTimeout string) labCluster {
	return labCluster{computeNodes: []string{"gpu01", "gpu02"}, extra: fmt.Sprintf(`
resource "gpucluster_rolling_reboot" "gpus" {
  controller    = gpucluster_slurm_controller.test.slurmctld_host
  nodes         = %s
  trigger       = %q
  drain_timeout = "2m"
  boot_timeout  = %q
  depends_on    = [gpucluster_slurm_compute.gpu01, gpucluster_slurm_compute.gpu02]
}
`, nodes, trigger, bootTimeout)}
}

// TestAccRollingReboot_twoGPUServers is the guide's driver update on the lab: with a job
// running on gpu01, a rolling reboot of both GPU servers drains gpu01, lets the job finish,
// reboots it, resumes it once slurmd is back, and only then does the same with gpu02. A sampler
// watches sinfo throughout: the two are never out of service at once. Both end idle, with new
// boot ids. Then a run stopped after gpu01 (its record written, gpu02's not) goes on with gpu02
// alone. A server that does not come back stops the run with the other untouched, and the
// next apply goes on from it.
func TestAccRollingReboot_twoGPUServers(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	var jobID string
	var boots map[string]string
	var watch *outOfService
	t.Cleanup(func() { _ = cancelJobs(l)(nil) })
	testFromIdleCluster(t, l, labCluster{computeNodes: gpus}, gpus, []resource.TestStep{
		{
			// Bad input is refused at plan time, before any server is touched.
			Config:      rollingClusterOf(`["gpu01", "login01"]`, "535.104.05").config(l),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Controller Among The Servers To Reboot.*nodes lists login01, the controller`),
		},
		{
			Config:      rollingClusterOf(`["gpu01", "gpu01"]`, "535.104.05").config(l),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Duplicate List Value.*nodes.*` + wrapped(`duplicate values of: "gpu01"`)),
		},
		{
			Config:      rollingClusterOf(`["gpu01", "gpu02"]`, "535.104.05\n").config(l),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)trigger.*` + wrapped("must be 1 to 200 printable ASCII characters")),
		},
		{
			PreConfig: func() {
				// Records an earlier run on this lab left would mark the servers done.
				onHost(t, l, "login01", "rm -rf "+slurm.RebootRecordDir)
				boots = bootIDs(t, l, gpus)
				jobID = startShortJob(t, l, "gpu01", 20)
				watch = watchOutOfService(l)
			},
			Config: rollingCluster("535.104.05").config(l),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(rollingAddr, tfjsonpath.New("plan_order"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("gpu01"), knownvalue.StringExact("gpu02")})),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error { return watch.stop().check(gpus) },
				func(*terraform.State) error { return checkJobCompleted(l, jobID) },
				func(*terraform.State) error { return checkRebooted(l, boots, gpus) },
				checkNodeStates(l, "gpu01:idle\ngpu02:idle"),
				checkOnHosts(l, []string{"login01"}, "cat "+slurm.RebootRecordDir+"/gpu01 "+slurm.RebootRecordDir+"/gpu02", "535.104.05\n535.104.05"),
				checkNoReason(l, gpus...),
			),
		},
		{ResourceName: rollingAddr, ImportState: true, ImportStateId: "gpu01,gpu02@login01", ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"trigger", "plan_order", "drain_timeout", "boot_timeout"}},
		{
			// A run that stopped after gpu01: its record is for the new trigger, gpu02's is not.
			PreConfig: func() {
				onHost(t, l, "login01", "echo 550.54.15 > "+slurm.RebootRecordDir+"/gpu01")
				boots = bootIDs(t, l, gpus)
			},
			Config: rollingCluster("550.54.15").config(l),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rollingAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rollingAddr, tfjsonpath.New("plan_order"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("gpu02")})),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error {
					if now := bootIDs(t, l, []string{"gpu01"}); now["gpu01"] != boots["gpu01"] {
						return fmt.Errorf("gpu01, done before, was rebooted again")
					}
					return checkRebooted(l, boots, []string{"gpu02"})
				},
				checkNodeStates(l, "gpu01:idle\ngpu02:idle"),
			),
		},
		{
			// gpu01 does not come back (no sshd after its reboot): the run stops there.
			PreConfig: func() {
				onHost(t, l, "gpu01", "systemctl mask ssh.service")
				boots = bootIDs(t, l, gpus)
			},
			Config:      rollingClusterWith(`["gpu01", "gpu02"]`, "550.54.15-1", "20s").config(l),
			ExpectError: regexp.MustCompile(`(?s)Server Did Not Come Back.*` + wrapped("The run stopped at gpu01; the servers after it were not touched.")),
		},
		{
			// gpu02 was not touched; once gpu01 answers again, the next apply goes on from it.
			PreConfig: func() {
				if err := checkRebooted(l, boots, []string{"gpu01"}); err != nil {
					t.Fatal(err)
				}
				if now := bootIDs(t, l, []string{"gpu02"}); now["gpu02"] != boots["gpu02"] {
					t.Fatal("gpu02 was rebooted after gpu01 did not come back")
				}
				if err := checkNodeStates(l, "gpu01:drained\ngpu02:idle")(nil); err != nil {
					t.Fatal(err)
				}
				onHost(t, l, "gpu01", "systemctl unmask ssh.service && systemctl start ssh.service")
			},
			Config: rollingClusterOf(`["gpu01", "gpu02"]`, "550.54.15-1").config(l),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(rollingAddr, tfjsonpath.New("plan_order"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("gpu01"), knownvalue.StringExact("gpu02")})),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: checkNodeStates(l, "gpu01:idle\ngpu02:idle"),
		},
	})
}

func bootIDs(t *testing.T, l *lab.Lab, hosts []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, h := range hosts {
		out[h] = onHost(t, l, h, "cat /proc/sys/kernel/random/boot_id")
	}
	return out
}

func checkRebooted(l *lab.Lab, before map[string]string, hosts []string) error {
	for _, h := range hosts {
		now, err := onHostErr(l, h, "cat /proc/sys/kernel/random/boot_id")
		if err != nil {
			return err
		}
		if now == before[h] {
			return fmt.Errorf("%s was not rebooted: boot id %s as before", h, now)
		}
	}
	return nil
}

// outOfService samples sinfo on login01 every second: which nodes could not take a job.
type outOfService struct {
	mu      sync.Mutex
	samples []map[string]bool
	done    chan struct{}
	stopped chan struct{}
}

func watchOutOfService(l *lab.Lab) *outOfService {
	w := &outOfService{done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		for {
			if out, err := onHostErr(l, "login01", "sinfo -a -h -N -o '%N %T'"); err == nil {
				sample := map[string]bool{}
				for _, line := range strings.Split(out, "\n") {
					if node, state, ok := strings.Cut(line, " "); ok && !slurm.Usable(state) {
						sample[node] = true
					}
				}
				w.mu.Lock()
				w.samples = append(w.samples, sample)
				w.mu.Unlock()
			}
			select {
			case <-w.done:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return w
}

func (w *outOfService) stop() *outOfService {
	close(w.done)
	<-w.stopped
	return w
}

// check wants each node out of service in some sample, and never two at once.
func (w *outOfService) check(nodes []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for i, s := range w.samples {
		if len(s) > 1 {
			return fmt.Errorf("sample %d of %d: %v out of service at once", i+1, len(w.samples), s)
		}
		for n := range s {
			seen[n] = true
		}
	}
	for _, n := range nodes {
		if !seen[n] {
			return fmt.Errorf("%s was never seen out of service in %d samples", n, len(w.samples))
		}
	}
	return nil
}
