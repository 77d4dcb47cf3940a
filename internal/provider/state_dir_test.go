package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// Issue #25: the provider's state directory was made 0775 by the firewall code and 0755 by the
// UID ledger's, so its mode depended on which resource wrote first. It ends root:root 0755
// either way, and stays so when the other writer comes second.
func TestAccStateDir_oneModeWhicheverWriterIsFirst(t *testing.T) {
	l := lab.Require(t)
	const node, name, uid = "login01", "tacc_statedir", 1175
	user := fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = [%q]
}
`, name, uid, node)
	rule := firewallRuleBlock("test", node, "5611", "tcp", "10.0.0.0/24", "tacc state dir")
	orders := map[string][2]string{
		"user first":     {user, rule},
		"firewall first": {rule, user},
	}
	for order, blocks := range orders {
		t.Run(order, func(t *testing.T) {
			withoutStateDir(t, l, node)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy: resource.ComposeAggregateTestCheckFunc(
					checkUserGone(l, name, []string{node}, ""),
					checkFirewallClean(l, node, "allow:5611/tcp:from=10.0.0.0/24"),
				),
				Steps: []resource.TestStep{
					{Config: providerConfig(l, "") + blocks[0], Check: checkOnHost(l, node, statDir, "755 root:root")},
					{Config: providerConfig(l, "") + blocks[0] + blocks[1], Check: checkOnHost(l, node, statDir, "755 root:root")},
				},
			})
		})
	}
}

// stateDir is the provider's state directory on a node, spelled out: the test checks the host,
// not the provider's own constant.
const (
	stateDir = "/var/lib/gpucluster"
	statDir  = "stat -c '%a %U:%G' " + stateDir
)

// withoutStateDir sets the node's state directory aside for the test and puts it back after.
func withoutStateDir(t *testing.T, l *lab.Lab, node string) {
	t.Helper()
	const saved = stateDir + ".tacc-saved"
	onHost(t, l, node, fmt.Sprintf("rm -rf %[2]s && if [ -e %[1]s ]; then mv %[1]s %[2]s; fi", stateDir, saved))
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), node, fmt.Sprintf("rm -rf %[1]s && if [ -e %[2]s ]; then mv %[2]s %[1]s; fi", stateDir, saved))
	})
}
