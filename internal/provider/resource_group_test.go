package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

func groupConfig(l *lab.Lab, name string, gid int, nodes []string) string {
	return providerConfig(l, "") + groupLifecycleBlock(name, gid, nodes)
}

// groupLifecycleBlock is the group the lifecycle tests manage, on the lab and on fake hosts.
func groupLifecycleBlock(name string, gid int, nodes []string) string {
	return fmt.Sprintf(`
resource "gpucluster_group" "test" {
  name  = %q
  gid   = %d
  nodes = %s
}
`, name, gid, hclList(nodes))
}

func TestAccGroup_lifecycle(t *testing.T) {
	l := lab.Require(t)
	const name, gid = "tacc_team", 2101
	all := labNodeNames(l)
	first := all[:2]
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGroupGone(l, name, all),
		Steps: []resource.TestStep{
			{
				Config: groupConfig(l, name, gid, first),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("gid"), knownvalue.Int64Exact(gid)),
					statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("id"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("node_status"), allInSyncValue(first)),
					sameID.AddStateValue("gpucluster_group.test", tfjsonpath.New("id")),
				},
				Check: checkGroupOnHosts(l, name, gid, first),
			},
			{
				// Adding a node is an in-place update that creates the group there.
				Config: groupConfig(l, name, gid, all),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_group.test", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue("gpucluster_group.test", tfjsonpath.New("id"))},
				Check:             checkGroupOnHosts(l, name, gid, all),
			},
			{
				ResourceName:      "gpucluster_group.test",
				ImportState:       true,
				ImportStateIdFunc: idInStateAt("gpucluster_group.test", "nodes"),
				ImportStateVerify: true,
			},
			{
				PreConfig: func() { onHost(t, l, "gpu02", fmt.Sprintf("groupmod -g %d %s", gid+7, name)) },
				Config:    groupConfig(l, name, gid, all),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_group.test", plancheck.ResourceActionUpdate),
						expectBefore("gpucluster_group.test", "node_status", "gpu02", fmt.Sprintf("gid %d on gpu02, want %d", gid+7, gid)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkGroupOnHosts(l, name, gid, all),
			},
		},
	})
}

func checkGroupOnHosts(l *lab.Lab, name string, gid int, nodes []string) resource.TestCheckFunc {
	return checkOnHosts(l, nodes, "getent group "+name+" | cut -d: -f1,3", fmt.Sprintf("%s:%d", name, gid))
}

func checkGroupGone(l *lab.Lab, name string, nodes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range nodes {
			if out, _, err := l.Exec(context.Background(), n, "getent group "+name); err == nil {
				return fmt.Errorf("%s: group %s still exists after destroy: %s", n, name, out)
			}
		}
		return nil
	}
}
