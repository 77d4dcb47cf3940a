package provider

import (
	"fmt"
	"math"
	"strconv"
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
)

// associationsConfig is a research account with the test user in it, and, with qos set, a
// QOS of one GPU per user that the user's jobs get by default.
func associationsConfig(qos bool) string {
	user := `
resource "gpucluster_slurm_account" "research" {
  controller  = gpucluster_slurm_accounting.test.id
  name        = "research"
  fairshare   = 10
  description = "gpu research"
}

resource "gpucluster_slurm_user" "alice" {
  controller      = gpucluster_slurm_accounting.test.id
  name            = gpucluster_user.alice.name
  accounts        = [gpucluster_slurm_account.research.name]
  default_account = gpucluster_slurm_account.research.name
%s}
`
	if !qos {
		return fmt.Sprintf(user, "")
	}
	return fmt.Sprintf(user, `  qos             = [gpucluster_slurm_qos.gpu1.name]
  default_qos     = gpucluster_slurm_qos.gpu1.name
`) + `
resource "gpucluster_slurm_qos" "gpu1" {
  controller        = gpucluster_slurm_activation.test.id
  name              = "gpu1"
  priority          = 10
  max_tres_per_user = { "gres/gpu" = 1 }
}
`
}

// gpuHoursConfig reads the GPU hours from start on.
func gpuHoursConfig(start string) string {
	return fmt.Sprintf(`
data "gpucluster_slurm_gpu_hours" "today" {
  controller = gpucluster_slurm_accounting.test.id
  start      = %q
}
`, start)
}

// TestAccSlurmAccounting_gpuHours is the acceptance test: from bare hosts the cluster
// with accounting applies; as the cluster user, two GPU jobs run at once and sacct records
// each with gres/gpu in AllocTRES; the data source reports the user's GPU hours; a QOS of one
// GPU per user makes the second of two concurrent jobs pend for that limit. The associations
// import, show hand-made drift and are repaired; destroying them keeps every job record.
func TestAccSlurmAccounting_gpuHours(t *testing.T) {
	l := lab.Require(t)
	t.Cleanup(func() { _ = cancelJobs(l)(nil) })
	// slurmdbd keeps every earlier run's jobs of the same user: the window starts at this run's
	// start, by the lab's clock, which sacct reads too.
	since := onHost(t, l, "login01", "date +%Y-%m-%dT%H:%M:%S")
	pw := passwordVariable(accountingPassword)
	accounting := `  tres    = ["gres/gpu"]
  enforce = ["associations", "limits", "qos"]
`
	users := []string{"gpucluster_slurm_user.alice"}
	withUser := accountingCluster(1, accounting, associationsConfig(false))
	withHours := accountingCluster(1, accounting, associationsConfig(false)+gpuHoursConfig(since))
	withQOS := accountingCluster(1, accounting, associationsConfig(true))
	var jobSeconds int64
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkAssociationsDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config:          withUser.config(l),
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_account.research", tfjsonpath.New("description"), knownvalue.StringExact("gpu research")),
					statecheck.ExpectKnownValue(users[0], tfjsonpath.New("accounts"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("research")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "AccountingStorageEnforce=associations,limits,qos", "AccountingStorageTRES=gres/gpu"),
					checkOnHost(l, "login01", "sacctmgr -nP show association where account=research format=Account,User,ParentName,Fairshare | LC_ALL=C sort",
						"research|"+slurmTestUser+"||1\nresearch||root|10"),
					checkGPUJobs(l, "gpu01"),
					checkJobsAccounted(l, since, &jobSeconds),
				),
			},
			{
				Config:          withHours.config(l),
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.gpucluster_slurm_gpu_hours.today", tfjsonpath.New("users").AtSliceIndex(0).AtMapKey("user"), knownvalue.StringExact(slurmTestUser)),
					statecheck.ExpectKnownValue("data.gpucluster_slurm_gpu_hours.today", tfjsonpath.New("users").AtSliceIndex(0).AtMapKey("jobs"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("data.gpucluster_slurm_gpu_hours.today", tfjsonpath.New("users").AtSliceIndex(0).AtMapKey("gpu_hours"),
						knownvalue.Float64Func(func(v float64) error { return wantHours(v, jobSeconds) })),
				},
			},
			{
				Config:          withQOS.config(l),
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(users[0], tfjsonpath.New("default_qos"), knownvalue.StringExact("gpu1")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "sacctmgr -nP show qos where name=gpu1 format=Name,Priority,MaxTRESPU", "gpu1|10|gres/gpu=1"),
					checkQOSLimit(l),
					cancelJobs(l),
				),
			},
			{ResourceName: "gpucluster_slurm_account.research", ImportState: true, ImportStateId: "research@login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ConfigVariables: pw},
			{ResourceName: users[0], ImportState: true, ImportStateId: slurmTestUser + "@login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ConfigVariables: pw},
			{ResourceName: "gpucluster_slurm_qos.gpu1", ImportState: true, ImportStateIdFunc: idInState("gpucluster_slurm_qos.gpu1"), ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ConfigVariables: pw},
			{
				// Drift made with sacctmgr by hand: each resource shows it, and apply puts it back.
				PreConfig: func() {
					onHost(t, l, "login01", "sacctmgr -i modify qos where name=gpu1 set priority=99 && sacctmgr -i modify account where name=research set fairshare=7 && "+
						"sacctmgr -i modify user where name="+slurmTestUser+" set qos=gpu1,normal")
				},
				Config:          withQOS.config(l),
				ConfigVariables: pw,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_slurm_qos.gpu1", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_slurm_account.research", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(users[0], plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "sacctmgr -nP show qos where name=gpu1 format=Priority", "10"),
					checkOnHost(l, "login01", "sacctmgr -nP show association where account=research user= format=Fairshare | head -n1", "10"),
				),
			},
		},
	})
}

// checkJobsAccounted waits until sacct, from slurmdbd, lists the test user's two GPU jobs since
// the time since with one gres/gpu each, and records their run time in seconds.
func checkJobsAccounted(l *lab.Lab, since string, seconds *int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", "sacct -u "+slurmTestUser+" -X -nP -S "+since+" -o JobName,State,ElapsedRaw,AllocTRES")
			if err != nil {
				return err
			}
			var total int64
			found := map[string]int{}
			for _, line := range strings.Split(out, "\n") {
				f := strings.Split(line, "|")
				if len(f) != 4 || !strings.HasPrefix(f[0], "gpujob") || f[1] == "RUNNING" || !strings.Contains(","+f[3]+",", ",gres/gpu=1,") {
					continue
				}
				n, err := strconv.ParseInt(f[2], 10, 64)
				if err != nil {
					return err
				}
				found[f[0]]++
				total += n
			}
			if found["gpujob1"] != 1 || found["gpujob2"] != 1 {
				return fmt.Errorf("sacct does not list gpujob1 and gpujob2 once each since %s, ended with gres/gpu=1 in AllocTRES:\n%s", since, out)
			}
			*seconds = total
			return nil
		})
	}
}

// wantHours compares the data source's hours with sacct's seconds of one-GPU jobs.
func wantHours(got float64, seconds int64) error {
	if want := math.Round(float64(seconds)/3.6) / 1000; got != want || seconds == 0 {
		return fmt.Errorf("gpu_hours = %v, want %v (sacct: %d GPU seconds)", got, want, seconds)
	}
	return nil
}

// checkQOSLimit submits two one-GPU jobs as the test user: the first runs, the second pends
// for the QOS's per-user GPU limit.
func checkQOSLimit(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		submit := "cd /tmp && for i in 1 2; do runuser -u " + slurmTestUser + " -- sbatch -Q -J qosjob$i --gres=gpu:1 -t 2 --wrap 'sleep 120'; done"
		if _, err := onHostErr(l, "login01", submit); err != nil {
			return err
		}
		return pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", "squeue -u "+slurmTestUser+" -h -o %j:%T:%r:%q | sort")
			if err != nil {
				return err
			}
			if out != "qosjob1:RUNNING:None:gpu1\nqosjob2:PENDING:QOSMaxGRESPerUser:gpu1" {
				return fmt.Errorf("want qosjob1 running and qosjob2 pending for QOSMaxGRESPerUser, both in QOS gpu1; got:\n%s", out)
			}
			return nil
		})
	}
}

// checkAssociationsDestroyed wants the account, user and QOS gone from slurmdbd and the test
// user's job records kept.
func checkAssociationsDestroyed(l *lab.Lab) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		if err := checkAccountingDestroyed(l)(s); err != nil {
			return err
		}
		out, err := onHostErr(l, "login01", "mysql -N -e \"SELECT COUNT(*) FROM slurm_acct_db.cluster_job_table j JOIN slurm_acct_db.cluster_assoc_table a ON j.id_assoc = a.id_assoc WHERE a.user = '"+
			slurmTestUser+"'; SELECT COUNT(*) FROM slurm_acct_db.qos_table WHERE name = 'gpu1' AND deleted = 0; SELECT COUNT(*) FROM slurm_acct_db.cluster_assoc_table WHERE deleted = 0 AND acct = 'research'\"")
		if err != nil {
			return err
		}
		if f := strings.Fields(out); len(f) != 3 || f[0] == "0" || f[1] != "0" || f[2] != "0" {
			return fmt.Errorf("after destroy, want the test user's jobs kept (first count above 0) and no QOS gpu1 or account research left (0 0); got %q", out)
		}
		return nil
	}
}
