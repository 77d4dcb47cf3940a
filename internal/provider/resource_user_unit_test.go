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

	"github.com/gpucluster/terraform-provider-gpucluster/internal/fakehost"
)

func fakeUserConfig(c *fakeCluster, name string, uid int, shell string, nodes []string) string {
	return c.provider("") + userLifecycleBlock(name, uid, shell, nodes)
}

// TestUser_fakeLifecycle is TestAccUser_lifecycle on fake hosts: create with the home on the
// login node, the shell changed in place, import, drift made by hand on two nodes shown in the
// plan and repaired, destroy that keeps the home.
func TestUser_fakeLifecycle(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01", "gpu02")
	const name, uid = "alice", 1101
	nodes := c.names
	sameID := statecheck.CompareValue(compare.ValuesSame())
	want := func(shell string) fakehost.User {
		return fakehost.User{Name: name, UID: uid, GID: 100, Home: "/home/" + name, Shell: shell}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             c.check(func() error { return c.userGone(name, nodes, "login01") }),
		Steps: []resource.TestStep{
			{
				Config: fakeUserConfig(c, name, uid, "/bin/bash", nodes),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("uid"), knownvalue.Int64Exact(uid)),
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("home"), knownvalue.StringExact("/home/"+name)),
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("node_status"), allInSyncValue(nodes)),
					sameID.AddStateValue("gpucluster_user.test", tfjsonpath.New("id")),
				},
				Check: c.check(func() error {
					if err := c.userOn(want("/bin/bash"), nodes); err != nil {
						return err
					}
					return c.homeOwned("login01", "/home/"+name, uid, 100)
				}),
			},
			{
				Config: fakeUserConfig(c, name, uid, "/bin/sh", nodes),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("shell"), knownvalue.StringExact("/bin/sh")),
					sameID.AddStateValue("gpucluster_user.test", tfjsonpath.New("id")),
				},
				Check: c.check(func() error { return c.userOn(want("/bin/sh"), nodes) }),
			},
			{
				ResourceName:            "gpucluster_user.test",
				ImportState:             true,
				ImportStateIdFunc:       idInStateAt("gpucluster_user.test", "nodes"),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"home_on"},
			},
			{
				PreConfig: func() {
					c.run("gpu02", fmt.Sprintf("usermod -u %d %s", uid+5, name))
					c.run("gpu01", "userdel "+name)
				},
				Config: fakeUserConfig(c, name, uid, "/bin/sh", nodes),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate),
						expectBefore("gpucluster_user.test", "node_status", "gpu02", fmt.Sprintf("uid %d on gpu02, want %d", uid+5, uid)),
						expectBefore("gpucluster_user.test", "node_status", "login01", inSync),
						plancheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("node_status"), allInSyncValue(nodes)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.check(func() error { return c.userOn(want("/bin/sh"), nodes) }),
			},
		},
	})
}

func (c *fakeCluster) userOn(want fakehost.User, nodes []string) error {
	for _, n := range nodes {
		if u, ok := c.host(n).User(want.Name); !ok || u != want {
			return fmt.Errorf("%s: user %s is %+v (found %v), want %+v", n, want.Name, u, ok, want)
		}
	}
	return nil
}

func (c *fakeCluster) homeOwned(node, home string, uid, gid int) error {
	fi, err := c.host(node).FS.Stat(home, false)
	if err != nil {
		return fmt.Errorf("%s: home: %w", node, err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return fmt.Errorf("%s: home %s has mode %v, want a directory of mode 0700", node, home, fi.Mode())
	}
	if u, g := c.host(node).FS.Owner(home); u != uid || g != gid {
		return fmt.Errorf("%s: home %s owned by %d:%d, want %d:%d", node, home, u, g, uid, gid)
	}
	return nil
}

// userGone is the CheckDestroy: the account is gone on every node and the home made on
// homeNode is kept.
func (c *fakeCluster) userGone(name string, nodes []string, homeNode string) error {
	for _, n := range nodes {
		if u, ok := c.host(n).User(name); ok {
			return fmt.Errorf("%s: account %s still exists after destroy: %+v", n, name, u)
		}
	}
	if fi, err := c.host(homeNode).FS.Stat("/home/"+name, false); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: home /home/%s is gone after destroy; it must be kept", homeNode, name)
	}
	return nil
}
