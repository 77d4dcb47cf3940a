package provider

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

const planAccountConfig = `
resource "gpucluster_slurm_account" "tacc_planacct" {
  controller = gpucluster_slurm_accounting.test.id
  name       = "tacc_planacct"
}
`

// slurmUserConfig is a Slurm user of the lab's accounting, in accounts (HCL).
func slurmUserConfig(name, accounts, defaultAccount string) string {
	return fmt.Sprintf(`
resource "gpucluster_slurm_user" %[1]q {
  controller      = gpucluster_slurm_accounting.test.id
  name            = %[1]q
  accounts        = %[2]s
  default_account = %[3]s
}
`, name, accounts, defaultAccount)
}

// associationsOnHost is every association slurmdbd holds, as sacctmgr lists them.
const associationsOnHost = "sacctmgr -nP show association format=Cluster,Account,User,ParentName | LC_ALL=C sort"

// TestAccSlurmUser_checkedAtPlan: with accounting running, a Slurm user that names an account
// slurmdbd does not have, and no gpucluster_slurm_account declares, is refused at plan
// naming accounts, and slurmdbd's associations stay as they were, and so do /etc, /home, the
// ledgers and the ownership records on every node; a Slurm user without a Unix
// account on the controller is a plan warning, and is created.
func TestAccSlurmUser_checkedAtPlan(t *testing.T) {
	l := lab.Require(t)
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "WARN")
	pw := passwordVariable(accountingPassword)
	base := accountingCluster(1, "", planAccountConfig)
	unknownAccount := accountingCluster(1, "", planAccountConfig+slurmUserConfig("tacc_bob", `["nosuchacct"]`, `"nosuchacct"`))
	noUnix := accountingCluster(1, "", planAccountConfig+slurmUserConfig("tacc_nounix", "[gpucluster_slurm_account.tacc_planacct.name]", "gpucluster_slurm_account.tacc_planacct.name"))
	var assocs string
	var hosts map[string]string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkAccountingDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config:          base.config(l),
				ConfigVariables: pw,
				Check: func(*terraform.State) error {
					assocs = onHost(t, l, "login01", associationsOnHost)
					hosts = snapshotHosts(t, l)
					return nil
				},
			},
			{
				Config:          unknownAccount.config(l),
				ConfigVariables: pw,
				PlanOnly:        true,
				ExpectError:     regexp.MustCompile(`(?s)Slurm Account Not Found.*` + wrapped(`accounts = ["nosuchacct"]`) + `.*` + wrapped("slurmdbd has no account nosuchacct")),
			},
			{
				PreConfig: func() {
					if now := onHost(t, l, "login01", associationsOnHost); now != assocs {
						t.Errorf("the refused plan changed slurmdbd's associations:\nbefore:\n%s\nafter:\n%s", assocs, now)
					}
					compareSnapshots(t, hosts, snapshotHosts(t, l))
				},
				Config:          noUnix.config(l),
				ConfigVariables: pw,
				Check: func(*terraform.State) error {
					if err := checkLogHas(logFile, "Slurm User Without Unix Account"); err != nil {
						return err
					}
					if err := checkLogHas(logFile, "User tacc_nounix has no Unix account there (getent passwd tacc_nounix finds none)"); err != nil {
						return err
					}
					return checkOnHost(l, "login01", "sacctmgr -nP show association where user=tacc_nounix format=Account", "tacc_planacct")(nil)
				},
			},
		},
	})
}
