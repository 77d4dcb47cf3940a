package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

func retiredUserConfig(l *lab.Lab, name string, uid int, allowNewUID bool, nodes []string) string {
	allow := ""
	if allowNewUID {
		allow = "\n  allow_new_uid_for_retired_name = true"
	}
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = %s%s
}
`, name, uid, hclList(nodes), allow)
}

// Issue #25: a retired name re-added with a new UID was accepted, and the files it left on the
// shared /home stayed owned by the old UID. The plan is refused, naming uid, the old UID and
// what it means, and no host changes; the name comes back under its old UID, and with
// allow_new_uid_for_retired_name under a new one, which the ledger then records.
func TestAccUser_retiredNameWithNewUIDRefused(t *testing.T) {
	l := lab.Require(t)
	const name, oldUID, newUID = "tacc_ret", 1160, 1161
	nodes := labNodeNames(l)
	// The ledger keeps an earlier run's lines for good, as it must: this test starts from a
	// ledger that never saw the name or its UIDs.
	onHost(t, l, "login01", fmt.Sprintf("[ ! -e %[1]s ] || sed -i -e '/^user %[2]s /d' -e '/^user [^ ]* 116[01] /d' %[1]s", users.LedgerPath, name))
	var before map[string]string
	ledgerLines := func(want string) resource.TestCheckFunc {
		return checkOnHost(l, "login01", fmt.Sprintf("grep ' %s ' %s", name, users.LedgerPath), want)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, name, nodes, ""),
		Steps: []resource.TestStep{
			{Config: retiredUserConfig(l, name, oldUID, false, nodes)},
			{Config: providerConfig(l, ""), Check: ledgerLines(fmt.Sprintf("user %s %d retired", name, oldUID))},
			{
				PreConfig: func() { before = snapshotHosts(t, l) },
				Config:    retiredUserConfig(l, name, newUID, false, nodes),
				ExpectError: diagPattern("Retired User Name With A New UID", fmt.Sprintf("uid   = %d", newUID),
					"records user "+name+" as retired under another UID on node login01", "allow_new_uid_for_retired_name = true",
					fmt.Sprintf("retired with uid %d", oldUID), fmt.Sprintf("keep owner %d", oldUID)),
			},
			{
				PreConfig: hostsUnchangedSince(t, l, &before),
				Config:    retiredUserConfig(l, name, oldUID, false, nodes),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, oldUID, name)),
					ledgerLines(fmt.Sprintf("user %s %d active", name, oldUID)),
				),
			},
			{Config: providerConfig(l, "")},
			{
				Config: retiredUserConfig(l, name, newUID, true, nodes),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, newUID, name)),
					ledgerLines(fmt.Sprintf("user %s %d retired\nuser %s %d active", name, oldUID, name, newUID)),
				),
			},
		},
	})
}
