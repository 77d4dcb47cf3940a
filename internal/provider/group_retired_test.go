package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

func retiredGroupConfig(l *lab.Lab, name string, gid int, allowNewGID bool, nodes []string) string {
	allow := ""
	if allowNewGID {
		allow = "\n  allow_new_gid_for_retired_name = true"
	}
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_group" "test" {
  name  = %q
  gid   = %d
  nodes = %s%s
}
`, name, gid, hclList(nodes), allow)
}

// Issue #25, as for users: a retired group name re-added with a new GID was accepted, and the
// files on shared storage kept the old GID. The plan is refused, naming gid, the old GID and
// what it means, and no host changes; so is another name given the retired GID. The name comes
// back under its old GID, and with allow_new_gid_for_retired_name under a new one, which the
// ledger then records.
func TestAccGroup_retiredNameWithNewGIDRefused(t *testing.T) {
	l := lab.Require(t)
	const name, other, oldGID, newGID = "tacc_gret", "tacc_gother", 1186, 1187
	nodes := labNodeNames(l)
	// The ledger keeps an earlier run's lines for good, as it must: this test starts from a
	// ledger that never saw the names or their GIDs.
	onHost(t, l, "login01", fmt.Sprintf("[ ! -e %[1]s ] || sed -i -e '/^group %[2]s /d' -e '/^group %[3]s /d' -e '/^group [^ ]* 118[67] /d' %[1]s",
		users.LedgerPath, name, other))
	var before map[string]string
	ledgerLines := func(want string) resource.TestCheckFunc {
		return checkOnHost(l, "login01", fmt.Sprintf("grep ' %s ' %s", name, users.LedgerPath), want)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGroupGone(l, name, nodes),
		Steps: []resource.TestStep{
			{Config: retiredGroupConfig(l, name, oldGID, false, nodes)},
			{Config: providerConfig(l, ""), Check: ledgerLines(fmt.Sprintf("group %s %d retired", name, oldGID))},
			{
				PreConfig: func() { before = snapshotHosts(t, l) },
				Config:    retiredGroupConfig(l, name, newGID, false, nodes),
				ExpectError: diagPattern("Retired Group Name With A New GID", fmt.Sprintf("gid   = %d", newGID),
					"records group "+name+" as retired under another GID on node login01", "allow_new_gid_for_retired_name = true",
					fmt.Sprintf("find /home -gid OLD -exec chgrp %s", name),
					fmt.Sprintf("retired with gid %d", oldGID), fmt.Sprintf("keep group %d", oldGID)),
			},
			{
				PreConfig: hostsUnchangedSince(t, l, &before),
				Config:    retiredGroupConfig(l, other, oldGID, true, nodes),
				ExpectError: diagPattern("ID Already Used", fmt.Sprintf("gid   = %d", oldGID),
					fmt.Sprintf("gid %d was first given to group %s (retired); it cannot be given to %s", oldGID, name, other)),
			},
			{
				PreConfig: hostsUnchangedSince(t, l, &before),
				Config:    retiredGroupConfig(l, name, oldGID, false, nodes),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGroupOnHosts(l, name, oldGID, nodes),
					ledgerLines(fmt.Sprintf("group %s %d active", name, oldGID)),
				),
			},
			{Config: providerConfig(l, "")},
			{
				Config: retiredGroupConfig(l, name, newGID, true, nodes),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGroupOnHosts(l, name, newGID, nodes),
					ledgerLines(fmt.Sprintf("group %s %d retired\ngroup %s %d active", name, oldGID, name, newGID)),
				),
			},
		},
	})
}
