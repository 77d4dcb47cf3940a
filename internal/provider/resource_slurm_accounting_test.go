package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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

// TestAccSlurmAccounting_lifecycle sets accounting up from bare hosts in one apply with the rest
// of the cluster, imports it, proves a second apply touches no host, repairs slurmdbd stopped
// and slurmdbd.conf edited by hand, rotates the password, and never lets it reach the state,
// a plan or the trace log.
func TestAccSlurmAccounting_lifecycle(t *testing.T) {
	l := lab.Require(t)
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "TRACE")
	watch := passwordWatch{passwords: []string{accountingPassword, accountingPassword2}}
	tres := `  tres    = ["gres/gpu"]
`
	base := accountingCluster(1, tres, "")
	pw1, pw2 := passwordVariable(accountingPassword), passwordVariable(accountingPassword2)
	var untouched hostMarks
	var startsBefore int
	const tresExtra = `  extra = { AccountingStorageTRES = "gres/gpu" }
`
	extraTRES := accountingCluster(2, "", "")
	extraTRES.controllerExtra = tresExtra
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkAccountingDestroyed(l),
		Steps: []resource.TestStep{
			{
				// The lab is shared with the tests before this one: count the starts this apply adds.
				PreConfig:       func() { startsBefore = slurmctldStarts(t, l) },
				Config:          base.config(l),
				ConfigVariables: pw1,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{watch, plancheck.ExpectUnknownValue(slurmAccountingAddr, tfjsonpath.New("dbd_host"))},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					watch,
					statecheck.ExpectKnownValue(slurmAccountingAddr, tfjsonpath.New("dbd_host"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(slurmAccountingAddr, tfjsonpath.New("node"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(slurmAccountingAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(slurmAccountingAddr, tfjsonpath.New("database_password_wo"), knownvalue.Null()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=login01", "AccountingStorageTRES=gres/gpu"),
					checkOnHost(l, "login01", "stat -c '%U:%G %a' "+slurm.SlurmdbdConfPath, "slurm:slurm 600"),
					checkOnHost(l, "login01", "systemctl is-active slurmdbd mariadb slurmctld | tr '\\n' ' '", "active active active"),
					// The real slurm.conf reaches slurmdbd, which knows the cluster and the GPU TRES
					// slurmctld registered at its start.
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
					checkOnHost(l, "login01", "sacctmgr -nP show tres where type=gres format=type,name | grep -cx 'gres|gpu'", "1"),
					// One start of slurmctld for the whole first apply.
					func(*terraform.State) error {
						if now := slurmctldStarts(t, l); now != startsBefore+1 {
							return fmt.Errorf("slurmctld started %d times during the first apply, want 1", now-startsBefore)
						}
						return nil
					},
					checkSinfo(l, "1:idle"),
				),
			},
			{
				ResourceName:                         slurmAccountingAddr,
				ImportState:                          true,
				ImportStateIdFunc:                    idInState(slurmAccountingAddr),
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "controller",
				ImportStateVerifyIgnore:              []string{"database_password_wo_version"},
				ConfigVariables:                      pw1,
			},
			{
				// Nothing to change: no file is written and no daemon restarted.
				PreConfig:        func() { untouched = markHosts(t, l) },
				Config:           base.config(l),
				ConfigVariables:  pw1,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            func(*terraform.State) error { return untouched.unchanged(t, l) },
			},
			{
				// Drift: slurmdbd stopped, slurmdbd.conf edited and the database user's password
				// changed by hand.
				PreConfig: func() {
					onHost(t, l, "login01", "systemctl stop slurmdbd && echo DebugLevel=debug5 >> "+slurm.SlurmdbdConfPath+
						" && mysql -e \"ALTER USER 'slurm'@'localhost' IDENTIFIED BY 'changed-by-hand-1'\"")
				},
				Config:          base.config(l),
				ConfigVariables: pw1,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmAccountingAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmAccountingAddr, "status", regexp.MustCompile(`^/etc/slurm/slurmdbd.conf was changed \(content, owner or mode\); `+
							`the password in /etc/slurm/slurmdbd.conf does not open the database; slurmdbd does not run$`)),
						watch,
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "grep -c DebugLevel "+slurm.SlurmdbdConfPath+" || true", "0"),
					checkOnHost(l, "login01", "systemctl is-active slurmdbd", "active"),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
				),
			},
			{
				// Rotation: a new password and version reach MariaDB and slurmdbd.conf, and
				// slurmdbd works with it.
				Config:          accountingCluster(2, tres, "").config(l),
				ConfigVariables: pw2,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmAccountingAddr, plancheck.ResourceActionUpdate), watch},
				},
				ConfigStateChecks: []statecheck.StateCheck{watch},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "grep -c '^StoragePass="+accountingPassword2+"$' "+slurm.SlurmdbdConfPath, "1"),
					checkOnHost(l, "login01", "printf '[client]\\nuser=slurm\\npassword="+accountingPassword2+"\\n' > /root/t.cnf && mysql --defaults-extra-file=/root/t.cnf -N -e 'SELECT 1' slurm_acct_db; rm -f /root/t.cnf", "1"),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
				),
			},
			{
				// P2 is precise: with accounting running, the controller's extra may carry the
				// GPU TRES list.
				Config:          extraTRES.config(l),
				ConfigVariables: pw2,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "AccountingStorageTRES=gres/gpu", "AccountingStorageType=accounting_storage/slurmdbd"),
					checkPing(l),
				),
			},
			{
				// Without the accounting, that list is refused at plan, before any host changes.
				Config:      labCluster{computeNodes: []string{"gpu01"}, controllerExtra: tresExtra}.config(l),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)GPU Accounting Needs Slurmdbd.*Do Not Enable GPU Accounting Yet`),
			},
			{
				Config:           extraTRES.config(l),
				ConfigVariables:  pw2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkOnHost(l, "login01", "systemctl is-active slurmdbd", "active"),
			},
		},
	})
	watch.checkLog(t, logFile)
}

// passwordWatch fails when a database password is found in a plan, the state or the log.
type passwordWatch struct{ passwords []string }

func (w passwordWatch) find(what string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	for i, p := range w.passwords {
		if strings.Contains(string(raw), p) {
			return fmt.Errorf("database password %d appears in the %s", i+1, what)
		}
	}
	return nil
}

func (w passwordWatch) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = w.find("plan", req.Plan)
}

func (w passwordWatch) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil || req.State.Values == nil {
		resp.Error = fmt.Errorf("no state to search")
		return
	}
	resp.Error = w.find("state", req.State)
}

// checkLog fails when a password is in the trace log, which must hold the resource's lines
// for the search to mean anything.
func (w passwordWatch) checkLog(t *testing.T, logFile string) {
	t.Helper()
	content, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("no Terraform log at %s: %v", logFile, err)
	}
	if !strings.Contains(string(content), "tf_resource_type=gpucluster_slurm_accounting") {
		t.Fatalf("the trace log (%d bytes) lacks the accounting resource's lines", len(content))
	}
	for i, p := range w.passwords {
		if strings.Contains(string(content), p) {
			t.Errorf("database password %d appears in the Terraform log", i+1)
		}
	}
}

// hostMarks are what an apply that changes something would move: the files' change times
// and the daemons' start times on login01.
type hostMarks string

const hostMarksScript = "stat -c '%n %Z' " + slurm.SlurmdbdConfPath + " " + slurm.MariaDBConfPath + " " + slurm.ConfDir + "/slurm.conf " + slurm.FragmentDir + "/*.conf; " +
	"for s in slurmdbd slurmctld mariadb; do echo $s $(systemctl show $s -p ActiveEnterTimestampMonotonic --value); done"

func markHosts(t *testing.T, l *lab.Lab) hostMarks {
	return hostMarks(onHost(t, l, "login01", hostMarksScript))
}

func (m hostMarks) unchanged(t *testing.T, l *lab.Lab) error {
	if now := onHost(t, l, "login01", hostMarksScript); now != string(m) {
		return fmt.Errorf("an apply with nothing to change touched login01:\nbefore:\n%s\nafter:\n%s", m, now)
	}
	return nil
}

// TestAccSlurmAccounting_otherNode adds accounting to a running cluster, with MariaDB and
// slurmdbd on gpu02: slurmctld on login01, which made up a ClusterID of its own when it
// first ran, restarts once and takes slurmdbd's instead of stopping with CLUSTER ID MISMATCH;
// it reaches slurmdbd on gpu02, sacctmgr on login01 gets its answers from there, and the
// import names both nodes.
func TestAccSlurmAccounting_otherNode(t *testing.T) {
	l := lab.Require(t)
	c := accountingCluster(1, `  node = "gpu02"
  tres = ["gres/gpu"]
`, "")
	pw := passwordVariable(accountingPassword)
	var started int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return checkOnHost(l, "gpu02", "systemctl is-active slurmdbd || true", "inactive")(nil)
		},
		Steps: []resource.TestStep{
			{
				Config: labCluster{computeNodes: []string{"gpu01"}}.config(l),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSinfo(l, "1:idle"),
					func(*terraform.State) error {
						started = slurmctldStarts(t, l)
						return checkOnHost(l, "login01", "test -s /var/spool/slurmctld/clustername && echo saved", "saved")(nil)
					},
				),
			},
			{
				Config:          c.config(l),
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmAccountingAddr, tfjsonpath.New("dbd_host"), knownvalue.StringExact("gpu02")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "AccountingStorageHost=gpu02", "AccountingStorageTRES=gres/gpu"),
					checkOnHost(l, "gpu02", "systemctl is-active slurmdbd mariadb | tr '\\n' ' '", "active active"),
					checkOnHost(l, "login01", "systemctl is-active slurmdbd || true", "inactive"),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
					checkOnHost(l, "login01", "journalctl -u slurmctld -o cat | grep -c 'CLUSTER ID MISMATCH' || true", "0"),
					checkPing(l),
					checkSinfo(l, "1:idle"),
					func(*terraform.State) error {
						if now := slurmctldStarts(t, l); now != started+1 {
							return fmt.Errorf("slurmctld started %d times in all, %d before accounting: want one restart", now, started)
						}
						return nil
					},
				),
			},
			{
				ResourceName:                         slurmAccountingAddr,
				ImportState:                          true,
				ImportStateId:                        "gpu02@login01",
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "controller",
				ImportStateVerifyIgnore:              []string{"database_password_wo_version"},
				ConfigVariables:                      pw,
			},
			{
				// The id the state shows, the controller alone: slurmdbd is found on gpu02,
				// where the controller's AccountingStorageHost points.
				ResourceName:                         slurmAccountingAddr,
				ImportState:                          true,
				ImportStateIdFunc:                    idInState(slurmAccountingAddr),
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "controller",
				ImportStateVerifyIgnore:              []string{"database_password_wo_version"},
				ConfigVariables:                      pw,
			},
		},
	})
}

func atoi(s string) int {
	n := 0
	_, _ = fmt.Sscan(s, &n)
	return n
}

// slurmctldStarts counts the starts of slurmctld on login01 since the lab booted.
func slurmctldStarts(t *testing.T, l *lab.Lab) int {
	t.Helper()
	return atoi(onHost(t, l, "login01", "journalctl -u slurmctld -o cat | grep -c '^Started slurmctld.service' || true"))
}
