package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// TestAccBeegfsClient_firewallBlocksMount is issue #26 item 8 and the guide's "where most
// first attempts break": gpu01's firewall denies inbound traffic and lacks the guide's BeeGFS
// storage rule, so the client module's mount sanity check on login01 cannot reach the storage
// service. The apply fails with the module's own line, naming gpu01 and the port to open;
// with the guide's rule (8003 from the subnet) the same configuration mounts.
func TestAccBeegfsClient_firewallBlocksMount(t *testing.T) {
	l := lab.Require(t)
	t.Cleanup(func() { undoBeegfsByHand(t, l) })
	installBeegfs(t, l, "login01", "beegfs-mgmtd", "beegfs-meta")
	prepareFreshBeegfs(t, l, []string{lab.LoginHost})
	prepareStorageHost(t, l, "gpu01")
	onHost(t, l, "gpu01", "ufw default deny incoming >/dev/null && ufw allow proto tcp from 10.0.0.10 to any port 22 >/dev/null && ufw --force enable >/dev/null")
	t.Cleanup(func() { onHost(t, l, "gpu01", "ufw --force reset >/dev/null; rm -f /etc/ufw/*.rules.[0-9]*") })
	config := beegfsCluster{storage: []string{"gpu01"}, clients: []string{lab.LoginHost}}.config(l)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)BeeGFS Mount Sanity Check Failed.*beegfs-storage\s+on\s+gpu01\s+\(10\.0\.0\.11\),\s+port\s+8003.*` +
					`Retrieval\s+of\s+storage\s+server\s+free\s+space\s+info\s+failed.*open\s+TCP\s+and\s+UDP\s+port\s+8003\s+there\s+to\s+login01`),
			},
			{
				// The guide's rule for the storage group: BeeGFS storage, 8003, any protocol, from the subnet.
				PreConfig: func() {
					if got := onHost(t, l, "login01", "findmnt -n /home >/dev/null && echo mounted || echo local"); got != "local" {
						t.Fatalf("after the refused mount, login01's /home is %s", got)
					}
					onHost(t, l, "gpu01", "ufw allow from 10.0.0.0/24 to any port 8003 comment 'BeeGFS storage' >/dev/null")
				},
				Config: config,
				Check:  checkMounted(l, "login01"),
			},
		},
	})
}
