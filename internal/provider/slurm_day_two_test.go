package provider

import (
	"context"
	"fmt"
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

const maintenanceReason = "GPU driver update"

// slurmRemovalReason is the provider's drain reason for a node leaving the cluster.
const slurmRemovalReason = slurm.RemovalReason

// TestAccSlurmNode_drain is the day-two maintenance path on the lab: the cluster the provider
// builds starts slurmctld without an error in its journal, and a batch job's `srun -N2
// hostname` runs on both GPU servers. Declaring drain_reason on gpu02 drains it with scontrol
// while a job runs there: neither slurmctld nor slurmd restarts, the job runs to its end, a
// new job does not start there. The drain imports, a resume by hand shows in the plan and
// apply drains again, removing drain_reason resumes the node and leaves it no reason (the lab
// has no accounting storage, the case where slurmctld keeps it), and a drain by hand shows too.
func TestAccSlurmNode_drain(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	base := labCluster{computeNodes: gpus}
	drained := labCluster{computeNodes: gpus, nodeExtra: map[string]string{"gpu02": fmt.Sprintf("  drain_reason = %q\n", maintenanceReason)}}
	var jobID, slurmctldSince, slurmdSince string
	t.Cleanup(func() { _ = cancelJobs(l)(nil) })
	// Only this test's own slurmctld starts count: a test before it on the same lab may have
	// started slurmctld with other files.
	testStart := journalCursors(t, l, []string{"login01"})["login01"]

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkClusterDestroyed(l, gpus),
		Steps: []resource.TestStep{
			{
				Config: base.config(l),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_node.gpu02", tfjsonpath.New("drain_reason"), knownvalue.Null()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSinfo(l, "2:idle"),
					// First: until a first job, slurmctld has no job state to load, and says so.
					checkSrunInBatchJob(l, gpus),
					checkCleanSlurmctldStarts(l, testStart),
				),
			},
			{
				// A reason that could break out of the scontrol command line is refused at plan time.
				Config:      labCluster{computeNodes: gpus, nodeExtra: map[string]string{"gpu02": "  drain_reason = \"a'; scontrol shutdown; '\"\n"}}.config(l),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)drain_reason.*` + wrapped("must be 1 to 200 letters")),
			},
			{
				PreConfig: func() {
					jobID = startShortJob(t, l, "gpu02", 40)
					slurmctldSince = slurmctldActiveSince(t, l)
					slurmdSince = onHost(t, l, "gpu02", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value")
				},
				Config: drained.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu02", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gpucluster_slurm_node.gpu02", tfjsonpath.New("drain_reason"), knownvalue.StringExact(maintenanceReason)),
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu01", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_node.gpu02", tfjsonpath.New("drain_reason"), knownvalue.StringExact(maintenanceReason)),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact("none")),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("reasons"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("drain gpu02 (" + maintenanceReason + ")")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkNodeState(l, "gpu02", "MIXED+DRAIN", maintenanceReason),
					func(*terraform.State) error { return checkActiveSince(l, slurmctldSince, false) },
					func(*terraform.State) error {
						if now := onHost(t, l, "gpu02", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value"); now != slurmdSince {
							return fmt.Errorf("slurmd on gpu02 restarted for a drain (active since %s, before %s)", now, slurmdSince)
						}
						return nil
					},
					func(*terraform.State) error { return checkNoNewJob(l, "gpu02") },
					func(*terraform.State) error { return checkJobCompleted(l, jobID) },
					checkNodeState(l, "gpu02", "IDLE+DRAIN", maintenanceReason),
				),
			},
			{ResourceName: "gpucluster_slurm_node.gpu02", ImportState: true, ImportStateId: "gpu02@login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ImportStateVerifyIgnore: []string{"facts_source"}},
			{
				// Resumed by hand: the plan shows the drain coming back.
				PreConfig: func() { onHost(t, l, "login01", "scontrol update nodename=gpu02 state=resume") },
				Config:    drained.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu02", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmActivationAddr, "status", regexp.MustCompile(`^activation pending \(none\): drain gpu02 \(GPU driver update\)$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkNodeState(l, "gpu02", "IDLE+DRAIN", maintenanceReason),
			},
			{
				// drain_reason removed: the node is resumed and takes jobs again.
				Config: base.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu02", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gpucluster_slurm_node.gpu02", tfjsonpath.New("drain_reason"), knownvalue.Null()),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("reasons"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("resume gpu02")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkNodeState(l, "gpu02", "IDLE", ""), checkSinfo(l, "2:idle"), checkNoReason(l, "gpu02")),
			},
			{
				// Drained by hand while the configuration declares no drain: the plan shows it.
				PreConfig: func() { onHost(t, l, "login01", "scontrol update nodename=gpu02 state=drain reason='by hand'") },
				Config:    base.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu02", plancheck.ResourceActionUpdate),
						expectPriorString("gpucluster_slurm_node.gpu02", "drain_reason", regexp.MustCompile(`^by hand$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkNodeState(l, "gpu02", "IDLE", ""), checkSinfo(l, "2:idle")),
			},
		},
	})
}

// startShortJob submits a one-GPU batch job of seconds as the cluster user on node and
// returns its id once it runs.
func startShortJob(t *testing.T, l *lab.Lab, node string, seconds int) string {
	t.Helper()
	id := onHost(t, l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- sbatch --parsable -w %s --gres=gpu:1 -J maintenance-survivor -t 2 -o /dev/null --wrap 'exec sleep %d'",
		slurmTestUser, node, seconds))
	if !regexp.MustCompile(`^[0-9]+$`).MatchString(id) {
		t.Fatalf("sbatch --parsable printed %q, want a job id", id)
	}
	if err := checkJobRunning(l, id, node); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkNodeState polls scontrol on login01 until node's State= is state and its reason, while
// one is wanted, is reason (slurmctld appends "[user@time]").
func checkNodeState(l *lab.Lab, node, state, reason string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", "scontrol show node -o "+node)
			if err != nil {
				return err
			}
			if !strings.Contains(out, " State="+state+" ") {
				return fmt.Errorf("scontrol show node %s: want State=%s: %s", node, state, out)
			}
			if reason != "" && !strings.Contains(out, " Reason="+reason+" [root@") {
				return fmt.Errorf("scontrol show node %s: want Reason=%s: %s", node, reason, out)
			}
			return nil
		})
	}
}

// checkNoReason wants each node to show no reason in sinfo, as a node that was never drained.
func checkNoReason(l *lab.Lab, nodes ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, node := range nodes {
			out, err := onHostErr(l, "login01", "sinfo -h -n "+node+" -o %E")
			if err != nil {
				return err
			}
			if out != "none" {
				return fmt.Errorf("sinfo shows the reason %q for %s, want none", out, node)
			}
		}
		return nil
	}
}

// checkJobCompleted waits for the job to end and wants it completed with exit code 0: a drain
// lets a running job finish.
func checkJobCompleted(l *lab.Lab, id string) error {
	return pollLab(time.Minute, func() error {
		out, err := onHostErr(l, "login01", "scontrol show job -o "+id)
		if err != nil {
			return err
		}
		if !strings.Contains(out, " JobState=COMPLETED ") || !strings.Contains(out, " ExitCode=0:0 ") {
			return fmt.Errorf("job %s has not completed with exit code 0: %s", id, out)
		}
		return nil
	})
}

// checkNoNewJob submits a job for node and wants it pending because the node is drained.
func checkNoNewJob(l *lab.Lab, node string) error {
	id, err := onHostErr(l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- sbatch --parsable -w %s -t 1 -o /dev/null --wrap true", slurmTestUser, node))
	if err != nil {
		return err
	}
	defer func() { _, _ = onHostErr(l, "login01", "scancel "+id) }()
	time.Sleep(3 * time.Second)
	out, err := onHostErr(l, "login01", "squeue -h -j "+id+" -o %T:%r")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(out, "PENDING:") {
		return fmt.Errorf("a new job for drained %s is %q, want PENDING", node, out)
	}
	return nil
}

// checkCleanSlurmctldStarts restarts slurmctld on login01 and wants no error line in its
// journal from that start, and none about MailProg or plugstack.conf since since (a journal
// cursor taken before the test's first apply), so the first start the apply made counts too.
func checkCleanSlurmctldStarts(l *lab.Lab, since string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cursor, err := onHostErr(l, "login01", "journalctl -q -n 0 --show-cursor | sed 's/^-- cursor: //'")
		if err != nil {
			return err
		}
		if _, err := onHostErr(l, "login01", "systemctl restart slurmctld"); err != nil {
			return err
		}
		if err := checkPing(l)(nil); err != nil {
			if err := pollLab(30*time.Second, func() error { return checkPing(l)(nil) }); err != nil {
				return err
			}
		}
		if err := checkSinfo(l, "2:idle")(nil); err != nil {
			return err
		}
		started, err := onHostErr(l, "login01", fmt.Sprintf("journalctl -q -u slurmctld --after-cursor='%s' -o cat | grep -c 'slurmctld version .* started' || true", cursor))
		if err != nil {
			return err
		}
		if started != "1" {
			return fmt.Errorf("slurmctld logged %s starts since the restart, want 1", started)
		}
		errors, err := onHostErr(l, "login01", fmt.Sprintf("journalctl -q -u slurmctld --after-cursor='%s' -o cat | grep -iE 'error|fatal' || true", cursor))
		if err != nil {
			return err
		}
		if errors != "" {
			return fmt.Errorf("slurmctld logged errors at its start:\n%s", errors)
		}
		noise, err := onHostErr(l, "login01", fmt.Sprintf("journalctl -q -u slurmctld --after-cursor='%s' -o cat | grep -E 'MailProg|plugstack' || true", since))
		if err != nil {
			return err
		}
		if noise != "" {
			return fmt.Errorf("slurmctld logged, since the test began:\n%s", noise)
		}
		return nil
	}
}

// checkSrunInBatchJob submits, as the cluster user, a batch job across nodes whose script runs
// `srun -N2 hostname`, waits for it, and wants it to end with 0 and to have printed each node.
func checkSrunInBatchJob(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- sbatch --wait --parsable -N%d -w %s -t 2 -o /tmp/srun-in-job-%%j.out --wrap 'srun -N%d hostname'",
			slurmTestUser, len(nodes), strings.Join(nodes, ","), len(nodes)))
		if err != nil {
			return fmt.Errorf("a batch job running srun failed (exit 127 is srun missing on the node): %w", err)
		}
		id := strings.TrimSpace(out)
		// The batch script runs on the allocation's first node, which writes the output.
		printed, err := onHostErr(l, nodes[0], "sort /tmp/srun-in-job-"+id+".out")
		if err != nil {
			return err
		}
		if want := strings.Join(nodes, "\n"); printed != want {
			return fmt.Errorf("srun -N%d hostname inside job %s printed %q, want %q", len(nodes), id, printed, want)
		}
		return nil
	}
}

// markOffline adds offline = true to host's node block in a configuration providerConfig wrote.
func markOffline(t *testing.T, l *lab.Lab, config, host string) string {
	t.Helper()
	block := fmt.Sprintf("    name    = %q\n    address = %q\n", host, l.Host(host).Address)
	if !strings.Contains(config, block) {
		t.Fatalf("no node block for %s in the configuration", host)
	}
	return strings.Replace(config, block, block+"    offline = true\n", 1)
}

// offlineUser is an account for login01 and gpu01 only, the change made while gpu02 is off.
func offlineUser(nodes ...string) string {
	return fmt.Sprintf(`
resource "gpucluster_user" "offline" {
  name  = "tacc_offline_bob"
  uid   = 1802
  group = "users"
  nodes = %s
}
`, hclList(nodes))
}

// TestAccProvider_offlineNode powers gpu02 off under a running cluster. Marked offline in its
// node block, the rest of the cluster plans and applies (a user is added on login01 and
// gpu01) with one warning, nothing connects to gpu02, and a change that would reach it is
// refused at plan time. Powered on again and unmarked, gpu02 rejoins Slurm by itself
// (ReturnToService=2) and the plan is empty.
func TestAccProvider_offlineNode(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	base := labCluster{computeNodes: gpus}
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "WARN")
	t.Cleanup(func() {
		if !l.Running("gpu02") {
			_ = l.Start(context.Background(), "gpu02")
		}
	})

	testFromIdleCluster(t, l, base, gpus, []resource.TestStep{
		{
			PreConfig: func() {
				if err := l.Stop(context.Background(), "gpu02"); err != nil {
					t.Fatal(err)
				}
			},
			Config: markOffline(t, l, base.config(l), "gpu02") + offlineUser("login01", "gpu01"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_user.offline", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("gpucluster_slurm_compute.gpu02", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("gpucluster_user.alice", plancheck.ResourceActionNoop),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error {
					for _, h := range []string{"login01", "gpu01"} {
						out, err := onHostErr(l, h, "id -u tacc_offline_bob")
						if err != nil {
							return err
						}
						if out != "1802" {
							return fmt.Errorf("tacc_offline_bob on %s has UID %q, want 1802", h, out)
						}
					}
					return nil
				},
				func(*terraform.State) error { return checkLogHas(logFile, "Node gpu02 Is Offline") },
			),
		},
		{
			Config:      markOffline(t, l, base.config(l), "gpu02") + offlineUser("login01", "gpu01", "gpu02"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Node Offline.*` + wrapped("would change a resource on gpu02") + `.*` + wrapped("Nothing on any host was changed")),
		},
		{
			PreConfig: func() {
				if err := l.Start(context.Background(), "gpu02"); err != nil {
					t.Fatal(err)
				}
			},
			Config:           base.config(l) + offlineUser("login01", "gpu01"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			Check:            resource.ComposeAggregateTestCheckFunc(checkSinfo(l, "2:idle"), checkSrunInBatchJob(l, gpus)),
		},
	})
}

// TestAccSlurm_removeGPUServer removes gpu02 from the configuration while a job runs on it and
// another on gpu01. Destroy drains gpu02 and refuses while its job runs, changing nothing
// else: slurmd still runs there and slurm.conf still names it. Once the job is cancelled the
// same configuration removes it: slurmd stops on gpu02, slurm.conf names gpu01 alone,
// slurmctld starts once, and the job on gpu01 keeps running.
func TestAccSlurm_removeGPUServer(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	base := labCluster{computeNodes: gpus}
	shrunk := labCluster{computeNodes: gpus[:1]}
	var jobID string
	var cursors map[string]string
	t.Cleanup(func() { _ = cancelJobs(l)(nil) })

	testFromIdleCluster(t, l, base, gpus, []resource.TestStep{
		{
			PreConfig: func() {
				jobID = startBatchJob(t, l, "gpu02")
				startLongJob(t, l, "gpu01")
			},
			Config:      shrunk.config(l),
			ExpectError: regexp.MustCompile(`(?s)Jobs Still Run On Node.*gpu02.*jobs\s+[0-9]+\s+still\s+run\s+on\s+gpu02`),
		},
		{
			PreConfig: func() {
				if err := checkNodeState(l, "gpu02", "MIXED+DRAIN", slurmRemovalReason)(nil); err != nil {
					t.Fatalf("after the refused removal: %v", err)
				}
				if out := onHost(t, l, "gpu02", "systemctl is-active slurmd"); out != "active" {
					t.Fatalf("slurmd on gpu02 is %q after the refused removal, want active", out)
				}
				if err := checkSlurmConfRegexp(l, `(?m)^NodeName=gpu\[01-02\] `)(nil); err != nil {
					t.Fatalf("after the refused removal: %v", err)
				}
				onHost(t, l, "login01", "scancel "+jobID)
				cursors = journalCursors(t, l, []string{"login01"})
			},
			Config: shrunk.config(l),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_slurm_node.gpu02", plancheck.ResourceActionDestroy),
					plancheck.ExpectResourceAction("gpucluster_slurm_compute.gpu02", plancheck.ResourceActionDestroy),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error {
					return checkStarts(l, cursors, "slurmctld", map[string]int{"login01": 1})
				},
				checkSlurmConfRegexp(l, `(?m)^NodeName=gpu01 CPUs=`),
				func(*terraform.State) error {
					out, err := onHostErr(l, "gpu02", "systemctl is-active slurmd || true")
					if err != nil {
						return err
					}
					if out != "inactive" {
						return fmt.Errorf("slurmd on gpu02 is %q after the removal, want inactive", out)
					}
					return nil
				},
				checkLongJobRunning(l, "gpu01"),
				cancelJobs(l),
			),
		},
	})
}
