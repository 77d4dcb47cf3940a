package provider

import (
	"fmt"
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

// jobScripts are the controller's prolog and epilog attributes; each script writes a file
// named after the job on the node it runs on, with its mark in it.
func jobScripts(prologMark, epilogMark string) string {
	var b strings.Builder
	if prologMark != "" {
		fmt.Fprintf(&b, "  prolog = <<-EOT\n    #!/bin/sh\n    echo %s > /tmp/prolog-$SLURM_JOB_ID\n  EOT\n", prologMark)
	}
	if epilogMark != "" {
		fmt.Fprintf(&b, "  epilog = <<-EOT\n    #!/bin/sh\n    echo %s > /tmp/epilog-$SLURM_JOB_ID\n  EOT\n", epilogMark)
	}
	return b.String()
}

var (
	prologPath = slurm.ConfDir + "/" + slurm.PrologFile
	epilogPath = slurm.ConfDir + "/" + slurm.EpilogFile
)

// TestAccSlurmController_jobScripts sets a prolog and an epilog on a running cluster: the
// activation writes them beside slurm.conf (root, 0755) with the keys naming them, and a job
// on gpu02 runs both there, fetched by the configless slurmd. A script without an interpreter
// line is refused at plan time. The scripts import. A new prolog is a reconfigure that
// restarts no slurmd, and the next job runs it. A prolog edited by hand on the controller shows
// in the plan and is written back. Removing the epilog removes its file and its key, and a
// job then runs the prolog alone. Destroy removes the prolog.
func TestAccSlurmController_jobScripts(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu02"}
	withScripts := func(prolog, epilog string) labCluster {
		return labCluster{computeNodes: gpus, controllerExtra: jobScripts(prolog, epilog)}
	}
	var slurmdSince string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkClusterDestroyed(l, gpus),
			checkOnHost(l, "login01", "ls "+prologPath+" "+epilogPath+" 2>/dev/null | wc -l", "0"),
		),
		Steps: []resource.TestStep{
			{
				Config: labCluster{computeNodes: gpus}.config(l),
				Check:  resource.ComposeAggregateTestCheckFunc(checkSinfo(l, "1:idle"), checkJobScriptsRan(l, "gpu02", "", "")),
			},
			{
				Config: withScripts("v1", "done").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.Reconfigure.String())),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "Prolog="+slurm.PrologFile, "Epilog="+slurm.EpilogFile),
					checkOnHost(l, "login01", "stat -c '%U %G %a' "+prologPath+" "+epilogPath, "root root 755\nroot root 755"),
					checkOnHost(l, "login01", "tail -n 1 "+prologPath, "echo v1 > /tmp/prolog-$SLURM_JOB_ID"),
					checkJobScriptsRan(l, "gpu02", "v1", "done"),
				),
			},
			{
				Config:      labCluster{computeNodes: gpus, controllerExtra: "  prolog = \"echo no interpreter line\"\n"}.config(l),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)prolog.*` + wrapped("must start with an interpreter line")),
			},
			{
				ResourceName: slurmControllerAddr, ImportState: true, ImportStateId: "login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "node",
			},
			{
				// A new prolog alone: scontrol reconfigure sends it to slurmd, which keeps running.
				PreConfig: func() {
					slurmdSince = onHost(t, l, "gpu02", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value")
				},
				Config: withScripts("v2", "done").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.Reconfigure.String())),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("reasons"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(slurm.PrologFile + " changed")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkJobScriptsRan(l, "gpu02", "v2", "done"),
					func(*terraform.State) error {
						if now := onHost(t, l, "gpu02", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value"); now != slurmdSince {
							return fmt.Errorf("slurmd on gpu02 restarted for a new prolog (active since %s, before %s)", now, slurmdSince)
						}
						return nil
					},
				),
			},
			{
				// Edited by hand on the controller: the plan shows it, and apply writes it back.
				PreConfig: func() { onHost(t, l, "login01", "sed -i 's/v2/by-hand/' "+prologPath) },
				Config:    withScripts("v2", "done").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmActivationAddr, "status", regexp.MustCompile(`^activation pending \(reconfigure\): `+regexp.QuoteMeta(slurm.PrologFile)+` changed$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "tail -n 1 "+prologPath, "echo v2 > /tmp/prolog-$SLURM_JOB_ID"),
					checkJobScriptsRan(l, "gpu02", "v2", "done"),
				),
			},
			{
				// The epilog removed: its file and its key go, and slurmd runs none.
				Config:           withScripts("v2", "").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "ls "+epilogPath+" 2>/dev/null; grep -ci '^Epilog=' "+slurm.ConfDir+"/slurm.conf || true", "0"),
					checkSlurmConf(l, "Prolog="+slurm.PrologFile),
					checkJobScriptsRan(l, "gpu02", "v2", ""),
				),
			},
		},
	})
}

// checkJobScriptsRan runs a batch job as the cluster user on node and wants, on node, the
// prolog's and the epilog's files for it holding their marks, or no file where a mark is "".
func checkJobScriptsRan(l *lab.Lab, node, prologMark, epilogMark string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		id, err := onHostErr(l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- sbatch --wait --parsable -w %s -t 1 -o /dev/null --wrap true", slurmTestUser, node))
		if err != nil {
			return fmt.Errorf("a batch job on %s failed: %w", node, err)
		}
		// A job stays COMPLETING until its epilog has run, which may be after sbatch returns.
		if err := pollLab(30*time.Second, func() error {
			out, err := onHostErr(l, "login01", "scontrol show job -o "+id)
			if err != nil {
				return err
			}
			if !strings.Contains(out, " JobState=COMPLETED ") {
				return fmt.Errorf("job %s has not completed: %s", id, out)
			}
			return nil
		}); err != nil {
			return err
		}
		got, err := onHostErr(l, node, fmt.Sprintf("echo prolog:$(cat /tmp/prolog-%[1]s 2>/dev/null) epilog:$(cat /tmp/epilog-%[1]s 2>/dev/null)", id))
		if err != nil {
			return err
		}
		if want := fmt.Sprintf("prolog:%s epilog:%s", prologMark, epilogMark); got != want {
			return fmt.Errorf("after job %s on %s: %q, want %q", id, node, got, want)
		}
		return nil
	}
}
