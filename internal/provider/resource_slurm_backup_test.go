package provider

import (
	"fmt"
	"os"
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
)

const (
	backupAddr = "gpucluster_slurm_backup.slurm"
	backupDir  = "/var/backups/slurm"
	// dayTwoGuide holds the restore procedure the test runs.
	dayTwoGuide = "../../templates/guides/day-two-operations.md.tmpl"
)

// backupConfig is the guide's backup of the lab's controller and its accounting.
func backupConfig(trigger string, retention int) string {
	return fmt.Sprintf(`
resource "gpucluster_slurm_backup" "slurm" {
  controller         = gpucluster_slurm_accounting.test.id
  destination        = %q
  retention          = %d
  trigger            = %q
  include_accounting = true
  depends_on         = [gpucluster_slurm_activation.test]
}
`, backupDir, retention, trigger)
}

// TestAccSlurmBackup_restore is the acceptance test: with a held job in the queue and a
// finished job in the accounting, backups hold both; the retention keeps two of three; a backup
// deleted by hand is taken again; a lower retention alone removes the older one; and the guide's restore procedure, run on a controller whose
// state and database were wiped, brings the held job back to slurmctld and the finished job back
// to sacct.
func TestAccSlurmBackup_restore(t *testing.T) {
	l := lab.Require(t)
	onHost(t, l, "login01", "rm -rf "+backupDir)
	t.Cleanup(func() {
		_ = cancelJobs(l)(nil)
		_, _ = onHostErr(l, "login01", "rm -rf "+backupDir)
	})
	pw := passwordVariable(accountingPassword)
	probe := "backup-probe-" + randomToken()[:8]
	withBackup := func(trigger string) string { return accountingCluster(1, "", backupConfig(trigger, 2)).config(l) }
	keepOne := accountingCluster(1, "", backupConfig("t3", 1)).config(l)
	var held, done, first, latest, activeSince string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkAccountingDestroyed(l),
			// Destroy leaves the backups.
			checkOnHost(l, "login01", "ls "+backupDir+" | grep -c '^slurm-backup-'", "1"),
		),
		Steps: []resource.TestStep{
			{
				Config:          accountingCluster(1, "", "").config(l),
				ConfigVariables: pw,
				Check:           func(*terraform.State) error { held, done = submitProbeJobs(t, l, probe); return nil },
			},
			{
				Config:          withBackup("t1"),
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(backupAddr, tfjsonpath.New("backups"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue(backupAddr, tfjsonpath.New("latest"), knownvalue.StringRegexp(regexp.MustCompile(`^/var/backups/slurm/slurm-backup-[0-9]{8}T[0-9]{6}Z$`))),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error { first = backupAttr(s, "latest"); return nil },
					// The archive holds slurmctld's state files, the dump the finished job's row.
					func(s *terraform.State) error {
						return checkOnHost(l, "login01", "cd "+first+" && stat -c %a . && tar -tzf statesave.tar.gz | grep -cxE '\\./(job_state|node_state|clustername)' && "+
							"{ zcat slurm_acct_db.sql.gz | grep -q "+probe+"-done && echo dumped; }", "700\n3\ndumped")(s)
					},
					checkOnHost(l, "login01", "systemctl is-active slurmctld", "active"),
					// The database user's password is in no file of the backup.
					func(s *terraform.State) error {
						return checkOnHost(l, "login01", "{ zcat "+first+"/slurm_acct_db.sql.gz; tar -xzOf "+first+"/statesave.tar.gz; } | grep -c -a -F "+accountingPassword+" || true", "0")(s)
					},
				),
			},
			{
				ResourceName:            backupAddr,
				ImportState:             true,
				ImportStateIdFunc:       idInState(backupAddr),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"trigger", "retention", "include_accounting"},
				ConfigVariables:         pw,
			},
			{
				Config:            withBackup("t2"),
				ConfigVariables:   pw,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(backupAddr, tfjsonpath.New("backups"), knownvalue.ListSizeExact(2))},
			},
			{
				// The third backup: the retention removes the first.
				Config:            withBackup("t3"),
				ConfigVariables:   pw,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(backupAddr, tfjsonpath.New("backups"), knownvalue.ListSizeExact(2))},
				Check: func(s *terraform.State) error {
					return checkOnHost(l, "login01", "ls "+backupDir+" | grep -c '^slurm-backup-'; test -e "+first+" || echo gone", "2\ngone")(s)
				},
			},
			{
				// The latest backup deleted by hand: the plan takes a new one.
				PreConfig:       func() { onHost(t, l, "login01", "rm -rf "+latestOnHost(t, l)) },
				Config:          withBackup("t3"),
				ConfigVariables: pw,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(backupAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(s *terraform.State) error {
					latest = backupAttr(s, "latest")
					return checkOnHost(l, "login01", "ls "+latest, "slurm_acct_db.sql.gz\nstatesave.tar.gz")(s)
				},
			},
			{
				// The retention alone changes: the older backup goes, and no new one is taken.
				PreConfig:       func() { activeSince = slurmctldActiveSince(t, l) },
				Config:          keepOne,
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(backupAddr, tfjsonpath.New("backups"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringFunc(func(v string) error {
						if v != latest {
							return fmt.Errorf("backups = [%s], want [%s]", v, latest)
						}
						return nil
					})})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "ls "+backupDir+" | grep -c '^slurm-backup-'", "1"),
					func(*terraform.State) error { return checkActiveSince(l, activeSince, false) },
				),
			},
			{
				// A fresh controller: no state, no database. The guide's procedure brings both back.
				PreConfig: func() {
					onHost(t, l, "login01", "systemctl stop slurmctld slurmdbd && find /var/spool/slurmctld -mindepth 1 -delete && mysql -e 'DROP DATABASE slurm_acct_db'")
					onHost(t, l, "login01", restoreProcedure(t, latest))
					if err := checkSinfo(l, "1:idle")(nil); err != nil {
						t.Fatal(err)
					}
				},
				Config:           keepOne,
				ConfigVariables:  pw,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						return pollLab(time.Minute, func() error {
							out, err := onHostErr(l, "login01", "scontrol show job "+held+" | grep -oE 'JobName=[^ ]+|JobState=[A-Z]+|Reason=[A-Za-z]+' | tr '\\n' ' '")
							if err != nil {
								return err
							}
							if want := "JobName=" + probe + "-held JobState=PENDING Reason=JobHeldUser"; out != want {
								return fmt.Errorf("after the restore, scontrol show job %s: %q, want %q", held, out, want)
							}
							return nil
						})
					},
					func(s *terraform.State) error {
						return checkOnHost(l, "login01", "sacct -X -n -P -j "+done+" -o JobName,State", probe+"-done|COMPLETED")(s)
					},
					cancelJobs(l),
				),
			},
		},
	})
}

// submitProbeJobs queues a held job and runs one to its end as the cluster user, and waits until
// slurmdbd records the finished one; it returns both job IDs.
func submitProbeJobs(t *testing.T, l *lab.Lab, probe string) (held, done string) {
	t.Helper()
	sbatch := "cd /tmp && timeout 60 runuser -u " + slurmTestUser + " -- sbatch --parsable -t 1 -o /dev/null "
	held = onHost(t, l, "login01", sbatch+"--hold -J "+probe+"-held --wrap true")
	done = onHost(t, l, "login01", sbatch+"--wait --gres=gpu:1 -J "+probe+"-done --wrap true")
	if err := checkSinfoShows(l, "sacct -X -n -P -j "+done+" -o JobName,State", probe+"-done|COMPLETED")(nil); err != nil {
		t.Fatal(err)
	}
	return held, done
}

func backupAttr(s *terraform.State, attr string) string {
	if rs, ok := s.RootModule().Resources[backupAddr]; ok {
		return rs.Primary.Attributes[attr]
	}
	return ""
}

// latestOnHost is the newest backup on login01.
func latestOnHost(t *testing.T, l *lab.Lab) string {
	t.Helper()
	return backupDir + "/" + onHost(t, l, "login01", "ls "+backupDir+" | grep '^slurm-backup-' | sort | tail -n1")
}

// restoreProcedure is the guide's restore, its commands as the guide gives them, for backup.
func restoreProcedure(t *testing.T, backup string) string {
	t.Helper()
	content, err := os.ReadFile(dayTwoGuide)
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(content), "## Back up the controller, and restore it\n")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, found := strings.Cut(block, "```")
	first, rest, _ := strings.Cut(block, "\n")
	if !found || !strings.HasPrefix(first, "B=") {
		t.Fatalf("the guide's restore procedure is not a sh block that starts with B=:\n%s", block)
	}
	return "set -e\nB=" + backup + "\n" + rest
}

// Bad arguments are refused at plan, naming the attribute, before any host is asked.
func TestSlurmBackupRefusedAtPlan(t *testing.T) {
	backup := func(destination, retention, trigger string) string {
		return fmt.Sprintf("resource \"gpucluster_slurm_backup\" \"test\" {\n  controller  = \"login01\"\n  destination = %q\n  retention   = %s\n  trigger     = %q\n}\n",
			destination, retention, trigger)
	}
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"relative destination":   {backup("backups", "2", "t"), `(?s)destination.*absolute`},
		"destination with ..":    {backup("/var/backups/../../etc", "2", "t"), `(?s)destination.*without\s+\.\s+or\s+\.\.\s+parts`},
		"destination with quote": {backup("/var/b'x", "2", "t"), `(?s)destination.*absolute`},
		"system destination":     {backup("/var", "2", "t"), `(?s)destination.*system\s+directory`},
		"no backup kept":         {backup("/var/backups/slurm", "0", "t"), `(?s)retention.*at least 1`},
		"trigger with a newline": {backup("/var/backups/slurm", "2", "a\nb"), `(?s)trigger.*printable\s+ASCII`},
	})
}
