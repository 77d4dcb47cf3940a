package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func fakeGroupConfig(c *fakeCluster, name string, gid int, nodes []string) string {
	return c.provider("") + groupLifecycleBlock(name, gid, nodes)
}

// TestGroup_fakeLifecycle is TestAccGroup_lifecycle on fake hosts: create, a node added in
// place, import, a GID changed by hand shown in the plan and put back, destroy.
func TestGroup_fakeLifecycle(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01", "gpu02")
	const name, gid = "team", 2101
	all := c.names
	first := all[:2]
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             c.check(func() error { return c.groupGone(name, all) }),
		Steps: []resource.TestStep{
			{
				Config: fakeGroupConfig(c, name, gid, first),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("gid"), knownvalue.Int64Exact(gid)),
					statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("id"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("node_status"), allInSyncValue(first)),
					sameID.AddStateValue("gpucluster_group.test", tfjsonpath.New("id")),
				},
				Check: c.check(func() error { return c.groupOn(name, gid, first, all[2:]) }),
			},
			{
				Config: fakeGroupConfig(c, name, gid, all),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_group.test", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue("gpucluster_group.test", tfjsonpath.New("id"))},
				Check:             c.check(func() error { return c.groupOn(name, gid, all, nil) }),
			},
			{
				ResourceName:      "gpucluster_group.test",
				ImportState:       true,
				ImportStateIdFunc: idInStateAt("gpucluster_group.test", "nodes"),
				ImportStateVerify: true,
			},
			{
				PreConfig: func() { c.run("gpu02", fmt.Sprintf("groupmod -g %d %s", gid+7, name)) },
				Config:    fakeGroupConfig(c, name, gid, all),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_group.test", plancheck.ResourceActionUpdate),
						expectBefore("gpucluster_group.test", "node_status", "gpu02", fmt.Sprintf("gid %d on gpu02, want %d", gid+7, gid)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error { return c.groupOn(name, gid, all, nil) }),
			},
		},
	})
}

// groupOn checks that the group has gid on each of nodes and does not exist on the others.
func (c *fakeCluster) groupOn(name string, gid int, nodes, without []string) error {
	for _, n := range nodes {
		g, ok := c.host(n).Group(name)
		if !ok || g.GID != gid {
			return fmt.Errorf("%s: group %s is %+v (found %v), want gid %d", n, name, g, ok, gid)
		}
	}
	return c.groupGone(name, without)
}

func (c *fakeCluster) groupGone(name string, nodes []string) error {
	for _, n := range nodes {
		if g, ok := c.host(n).Group(name); ok {
			return fmt.Errorf("%s: group %s still exists: %+v", n, name, g)
		}
	}
	return nil
}
