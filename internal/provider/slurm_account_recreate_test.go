package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
)

func describedAccountConfig(description string) string {
	return fmt.Sprintf(`
resource "gpucluster_slurm_account" "tacc_recreate" {
  controller  = gpucluster_slurm_accounting.test.id
  name        = "tacc_recreate"
  description = %q
}
`, description)
}

// liveAccountRowsOnHost counts the account's rows that slurmdbd's own tables hold as not
// deleted: the account, then its associations.
const liveAccountRowsOnHost = `mysql -N -e "SELECT COUNT(*) FROM slurm_acct_db.acct_table WHERE name = 'tacc_recreate' AND deleted = 0; ` +
	`SELECT COUNT(*) FROM slurm_acct_db.cluster_assoc_table WHERE acct = 'tacc_recreate' AND deleted = 0"`

// Issue #25: destroying an account removed only its association on the cluster (sacctmgr
// deletes the account itself only when no cluster is named), so slurmdbd kept the account
// with its description, and declaring it again with another description failed with
// "inconsistent result". Destroy removes the account from slurmdbd, and it comes back as
// declared the second time; an account an earlier version left behind gets its declared
// description when added again.
func TestAccSlurmAccount_recreatedWithAnotherDescription(t *testing.T) {
	l := lab.Require(t)
	pw := passwordVariable(accountingPassword)
	first := accountingCluster(1, "", describedAccountConfig("first team"))
	none := accountingCluster(1, "", "")
	second := accountingCluster(1, "", describedAccountConfig("second team"))
	// A failed earlier run may have left the account, and its owner record, behind.
	onHost(t, l, "login01", "rm -f "+ownership.Dir+"/slurm_account/tacc_recreate; "+
		"! systemctl -q is-active slurmdbd || sacctmgr -i delete account where name=tacc_recreate >/dev/null || true")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkAccountingDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config:          first.config(l),
				ConfigVariables: pw,
				Check:           checkOnHost(l, "login01", "sacctmgr -nP show account where name=tacc_recreate format=Account,Descr", "tacc_recreate|first team"),
			},
			{
				Config:          none.config(l),
				ConfigVariables: pw,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "sacctmgr -nP show account where name=tacc_recreate format=Account", ""),
					checkOnHost(l, "login01", liveAccountRowsOnHost, "0\n0"),
				),
			},
			{
				Config:          second.config(l),
				ConfigVariables: pw,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_slurm_account.tacc_recreate", tfjsonpath.New("description"), knownvalue.StringExact("second team")),
				},
				Check: checkOnHost(l, "login01", "sacctmgr -nP show account where name=tacc_recreate format=Account,Descr", "tacc_recreate|second team"),
			},
			{Config: none.config(l), ConfigVariables: pw, Check: checkOnHost(l, "login01", liveAccountRowsOnHost, "0\n0")},
			{
				// What an earlier provider version's destroy left: the account without its
				// association, under its old description.
				PreConfig: func() {
					onHost(t, l, "login01", "sacctmgr -i add account tacc_recreate cluster=cluster description='stale team' >/dev/null && "+
						"sacctmgr -i delete account where name=tacc_recreate cluster=cluster >/dev/null")
				},
				Config:          first.config(l),
				ConfigVariables: pw,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "sacctmgr -nP show account where name=tacc_recreate format=Account,Descr", "tacc_recreate|first team"),
					checkOnHost(l, "login01", "sacctmgr -nP show association where account=tacc_recreate format=Account,ParentName", "tacc_recreate|root"),
				),
			},
		},
	})
}
