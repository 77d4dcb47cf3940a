package provider

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// mariaDBMarksScript prints what a change of MariaDB's accounts or settings would move: every
// file under /etc/mysql by digest, each account with its plugin, password hash and the time
// its password last changed, and the provider's list of the users it created.
const mariaDBMarksScript = `find /etc/mysql -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
mysql -N -e "SELECT user, host, JSON_VALUE(priv, '$.plugin'), JSON_VALUE(priv, '$.authentication_string'), JSON_VALUE(priv, '$.password_last_changed') FROM mysql.global_priv ORDER BY user, host"
cat ` + slurm.DatabaseUsersPath + ` 2>/dev/null || echo no list`

type mariaDBMarks string

func markMariaDB(t *testing.T, l *lab.Lab) mariaDBMarks {
	t.Helper()
	return mariaDBMarks(onHost(t, l, "login01", mariaDBMarksScript))
}

func (m mariaDBMarks) unchanged(l *lab.Lab, what string) error {
	now, err := onHostErr(l, "login01", mariaDBMarksScript)
	if err != nil {
		return err
	}
	if now != string(m) {
		return fmt.Errorf("%s changed MariaDB on login01:\nbefore:\n%s\nafter:\n%s", what, m, now)
	}
	return nil
}

// accountingAloneConfig is only the accounting resource, on the controller login01 by name,
// so that its plan knows the node without a controller resource.
func accountingAloneConfig(l *lab.Lab, databaseUser string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
variable "db_password" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gpucluster_slurm_accounting" "test" {
  controller           = "login01"
  database_user        = %q
  database_password_wo = var.db_password
}
`, databaseUser)
}

// TestAccSlurmAccounting_refusesMariaDBAccountsItDidNotCreate: MariaDB's root as
// database_user is refused at plan before any host is asked, and an account made by hand is
// refused at plan naming database_user; MariaDB's files and accounts stay as they were, and so do
// /etc, /home, the ledgers and the ownership records on every node.
func TestAccSlurmAccounting_refusesMariaDBAccountsItDidNotCreate(t *testing.T) {
	l := lab.Require(t)
	onHost(t, l, "login01", "DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-server >/dev/null && systemctl start mariadb && "+
		"mysql -e \"CREATE USER IF NOT EXISTS 'tacc_handmade'@'localhost' IDENTIFIED BY 'handmade-password-1'\"")
	t.Cleanup(func() { _, _ = onHostErr(l, "login01", "mysql -e \"DROP USER IF EXISTS 'tacc_handmade'@'localhost'\"") })
	before := markMariaDB(t, l)
	hosts := snapshotHosts(t, l)
	pw := passwordVariable(accountingPassword)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:          accountingAloneConfig(l, "root"),
				ConfigVariables: pw,
				PlanOnly:        true,
				ExpectError:     regexp.MustCompile(`(?s)MariaDB Account Reserved.*` + wrapped(`database_user = "root"`) + `.*` + wrapped(`"root" is one of the accounts MariaDB sets up itself`)),
			},
			{
				PreConfig: func() {
					if err := before.unchanged(l, "the plan with root"); err != nil {
						t.Error(err)
					}
				},
				Config:          accountingAloneConfig(l, "tacc_handmade"),
				ConfigVariables: pw,
				PlanOnly:        true,
				ExpectError: regexp.MustCompile(`(?s)MariaDB Account Not Created By The Provider.*` + wrapped(`database_user = "tacc_handmade"`) + `.*` +
					wrapped("MariaDB there already has 'tacc_handmade'@'localhost', which gpucluster_slurm_accounting did not create") + `.*` +
					wrapped("The plan stops here and no host is changed.")),
			},
		},
	})
	if err := before.unchanged(l, "the refused plans"); err != nil {
		t.Error(err)
	}
	compareSnapshots(t, hosts, snapshotHosts(t, l))
}

// passwordLastChanged is when MariaDB last set the password of 'slurm'@'localhost'.
const passwordLastChanged = "mysql -N -e \"SELECT JSON_VALUE(priv, '$.password_last_changed') FROM mysql.global_priv WHERE user = 'slurm' AND host = 'localhost'\""

// TestAccSlurmAccounting_importKeepsTheAccount: the provider lists the database user it
// created; an account it did not create (its entry removed, as for accounting set up by hand or
// by an older release) is imported and used as it is: the update after the import leaves its
// password alone, a new database_password_wo_version sets it, and a password changed by hand
// is refused rather than set back. Destroy leaves the account.
func TestAccSlurmAccounting_importKeepsTheAccount(t *testing.T) {
	l := lab.Require(t)
	// The account ends without its entry: drop it, so later tests create it afresh.
	t.Cleanup(func() { _, _ = onHostErr(l, "login01", "mysql -e \"DROP USER IF EXISTS 'slurm'@'localhost'\"") })
	pw1, pw2 := passwordVariable(accountingPassword), passwordVariable(accountingPassword2)
	enforce := "  enforce = [\"associations\"]\n"
	without := labCluster{computeNodes: []string{"gpu01"}, extra: "\nremoved {\n  from = " + slurmAccountingAddr + "\n  lifecycle { destroy = false }\n}\n"}
	imported := accountingCluster(1, enforce, "\nimport {\n  to = "+slurmAccountingAddr+"\n  id = \"login01\"\n}\n")
	var changed string
	var handMade mariaDBMarks
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := checkAccountingDestroyed(l)(s); err != nil {
				return err
			}
			return handMade.unchanged(l, "destroy")
		},
		Steps: []resource.TestStep{
			{
				Config:          accountingCluster(1, "", "").config(l),
				ConfigVariables: pw1,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "stat -c '%U:%G %a' /var/lib/gpucluster "+slurm.DatabaseUsersPath+"; grep -v '^#' "+slurm.DatabaseUsersPath, "root:root 755\nroot:root 644\nslurm"),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
				),
			},
			{
				PreConfig: func() { onHost(t, l, "login01", "rm "+slurm.DatabaseUsersPath) },
				Config:    without.config(l),
			},
			{
				// The hand-over of the ownership guide: the state forgot the resource (above), and
				// its record goes too, so that the import may take it.
				PreConfig: func() {
					onHost(t, l, "login01", "rm "+ownership.Dir+"/slurm_accounting/accounting")
					changed = onHost(t, l, "login01", passwordLastChanged)
				},
				Config:          imported.config(l),
				ConfigVariables: pw1,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmAccountingAddr, plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "AccountingStorageEnforce=associations"),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
					func(*terraform.State) error { return checkOnHost(l, "login01", passwordLastChanged, changed)(nil) },
					checkOnHost(l, "login01", "test -e "+slurm.DatabaseUsersPath+" || echo no list", "no list"),
				),
			},
			{
				Config:          accountingCluster(2, enforce, "").config(l),
				ConfigVariables: pw2,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmAccountingAddr, plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "printf '[client]\\nuser=slurm\\npassword="+accountingPassword2+"\\n' > /root/t.cnf && mysql --defaults-extra-file=/root/t.cnf -N -e 'SELECT 1' slurm_acct_db; rm -f /root/t.cnf", "1"),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
					func(*terraform.State) error {
						if now := onHost(t, l, "login01", passwordLastChanged); now == changed {
							return fmt.Errorf("the rotation did not set the password (last changed %s, as before)", now)
						}
						return nil
					},
				),
			},
			{
				PreConfig: func() {
					onHost(t, l, "login01", "mysql -e \"ALTER USER 'slurm'@'localhost' IDENTIFIED BY 'changed-by-hand-3'\"")
					handMade = markMariaDB(t, l)
				},
				Config:          accountingCluster(2, enforce, "").config(l),
				ConfigVariables: pw2,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(slurmAccountingAddr, plancheck.ResourceActionUpdate)},
				},
				ExpectError: regexp.MustCompile(`(?s)Database Password Refused.*` + wrapped("database_password_wo does not open the database user's account, which the provider did not create") +
					`.*` + wrapped("Nothing was changed on the node.")),
			},
			{
				PreConfig: func() {
					if err := handMade.unchanged(l, "the refused apply"); err != nil {
						t.Error(err)
					}
				},
				Config:             accountingCluster(2, enforce, "").config(l),
				ConfigVariables:    pw2,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// The apply's refusals of the database user are each their own diagnostic, on the attribute to
// change; any other error is left to the step's.
func TestDatabaseUserRefused(t *testing.T) {
	foreign := &slurm.ForeignDatabaseUserError{User: slurm.DatabaseUser{Name: "tacc", Hosts: []string{"localhost"}}}
	for err, want := range map[error]string{
		fmt.Errorf("set up: %w", foreign):                                     "MariaDB Account Not Created By The Provider",
		fmt.Errorf("%w 'tacc'@'localhost'", slurm.ErrDatabasePasswordRefused): "Database Password Refused",
		slurm.CheckDatabaseUserName("root"):                                   "MariaDB Account Reserved",
	} {
		d, ok := databaseUserRefused("login01", err)
		if !ok || d.Summary() != want || !strings.Contains(d.Detail(), "Nothing was changed on the node.") {
			t.Errorf("%v: %v %v, want %s", err, ok, d, want)
		}
	}
	if _, ok := databaseUserRefused("login01", errors.New("start mariadb: exit status 1")); ok {
		t.Error("another error was taken for a refusal")
	}
}
