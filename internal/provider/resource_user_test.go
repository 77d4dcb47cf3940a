package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
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

func userConfig(l *lab.Lab, name string, uid int, shell string, nodes []string) string {
	return providerConfig(l, "") + userLifecycleBlock(name, uid, shell, nodes)
}

// userLifecycleBlock is the user the lifecycle tests manage, on the lab and on fake hosts.
func userLifecycleBlock(name string, uid int, shell string, nodes []string) string {
	return fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name    = %q
  uid     = %d
  group   = "users"
  shell   = %q
  nodes   = %s
  home_on = "login01"
}
`, name, uid, shell, hclList(nodes))
}

func TestAccUser_lifecycle(t *testing.T) {
	l := lab.Require(t)
	const name, uid = "tacc_alice", 1101
	nodes := labNodeNames(l)
	sameID := statecheck.CompareValue(compare.ValuesSame())

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, name, nodes, "login01"),
		Steps: []resource.TestStep{
			{
				Config: userConfig(l, name, uid, "/bin/bash", nodes),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("uid"), knownvalue.Int64Exact(uid)),
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("home"), knownvalue.StringExact("/home/"+name)),
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("node_status"), allInSyncValue(nodes)),
					sameID.AddStateValue("gpucluster_user.test", tfjsonpath.New("id")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, uid, name)),
					checkHomeOwned(l, "login01", "/home/"+name, fmt.Sprintf("%d:100", uid)),
				),
			},
			{
				Config: userConfig(l, name, uid, "/bin/sh", nodes),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("shell"), knownvalue.StringExact("/bin/sh")),
					sameID.AddStateValue("gpucluster_user.test", tfjsonpath.New("id")),
				},
				Check: checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/sh", name, uid, name)),
			},
			{
				ResourceName:            "gpucluster_user.test",
				ImportState:             true,
				ImportStateIdFunc:       idInStateAt("gpucluster_user.test", "nodes"),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"home_on"},
			},
			{
				// Hand-made drift on one node: the plan names it, apply repairs only that node.
				PreConfig: func() {
					onHost(t, l, "gpu02", fmt.Sprintf("usermod -u %d %s", uid+1, name))
					onHost(t, l, "gpu01", "userdel "+name)
				},
				Config: userConfig(l, name, uid, "/bin/sh", nodes),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("node_status"), allInSyncValue(nodes)),
					},
				},
				Check: checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/sh", name, uid, name)),
			},
			{
				Config:   userConfig(l, name, uid, "/bin/sh", nodes),
				PlanOnly: true,
			},
		},
	})
}

func TestAccUser_driftShownInPlan(t *testing.T) {
	l := lab.Require(t)
	const name, uid = "tacc_drift", 1102
	nodes := labNodeNames(l)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, name, nodes, "login01"),
		Steps: []resource.TestStep{
			{Config: userConfig(l, name, uid, "/bin/bash", nodes)},
			{
				PreConfig: func() { onHost(t, l, "gpu02", fmt.Sprintf("usermod -u %d %s", uid+5, name)) },
				Config:    userConfig(l, name, uid, "/bin/bash", nodes),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate),
						expectBefore("gpucluster_user.test", "node_status", "gpu02", fmt.Sprintf("uid %d on gpu02, want %d", uid+5, uid)),
						expectBefore("gpucluster_user.test", "node_status", "gpu01", inSync),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, uid, name)),
			},
		},
	})
}

func TestAccUser_addNodeTouchesOnlyThatNode(t *testing.T) {
	l := lab.Require(t)
	const name, uid = "tacc_grow", 1103
	all := labNodeNames(l)
	first := all[:len(all)-1]
	var before string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, name, all, "login01"),
		Steps: []resource.TestStep{
			{
				Config: userConfig(l, name, uid, "/bin/bash", first),
				Check: func(*terraform.State) error {
					var err error
					before, err = onHostErr(l, first[0], "stat -c %Y:%i /etc/passwd")
					return err
				},
			},
			{
				Config: userConfig(l, name, uid, "/bin/bash", all),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAccountOnHosts(l, name, all, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, uid, name)),
					func(*terraform.State) error {
						after, err := onHostErr(l, first[0], "stat -c %Y:%i /etc/passwd")
						if err != nil {
							return err
						}
						if after != before {
							return fmt.Errorf("/etc/passwd on %s was rewritten (%s -> %s) although only a new node was added", first[0], before, after)
						}
						return nil
					},
				),
			},
		},
	})
}

func TestAccUser_uidNeverReused(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	const uid = 1150
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, "tacc_old", nodes, "login01"),
		Steps: []resource.TestStep{
			{Config: userConfig(l, "tacc_old", uid, "/bin/bash", nodes)},
			{Config: providerConfig(l, "")},
			{
				Config:      userConfig(l, "tacc_new", uid, "/bin/bash", nodes),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)ID Already Used.*tacc_old`),
			},
		},
	})
}

func TestAccUser_badInput(t *testing.T) {
	l := lab.Require(t)
	before := snapshotAccounts(t, l)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(l, "") + `
resource "gpucluster_user" "test" {
  name  = "tacc_bad"
  uid   = 1201
  group = "nosuchgroup"
  nodes = ["login01", "gpu01"]
}`,
			ExpectError: regexp.MustCompile(`(?s)Unknown Group.*nosuchgroup`),
		}},
	})
	if after := snapshotAccounts(t, l); after != before {
		t.Errorf("bad input changed accounts on a host:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestAccUser_importRefusesDifferingUIDs(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_split"
	onHost(t, l, "login01", "useradd -M -u 1301 -g users "+name)
	onHost(t, l, "gpu01", "useradd -M -u 1301 -g users "+name)
	onHost(t, l, "gpu02", "useradd -M -u 1302 -g users "+name)
	t.Cleanup(func() {
		for _, h := range []string{"login01", "gpu01", "gpu02"} {
			onHost(t, l, h, "userdel "+name)
		}
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:        userConfig(l, name, 1301, "/bin/bash", []string{"login01", "gpu01", "gpu02"}),
			ResourceName:  "gpucluster_user.test",
			ImportState:   true,
			ImportStateId: name + "@login01,gpu01,gpu02",
			ExpectError:   regexp.MustCompile(`(?s)different uids.*gpu02 1302`),
		}},
	})
}

func allInSyncValue(nodes []string) knownvalue.Check {
	want := map[string]knownvalue.Check{}
	for _, n := range nodes {
		want[n] = knownvalue.StringExact(inSync)
	}
	return knownvalue.MapExact(want)
}

func checkAccountOnHosts(l *lab.Lab, name string, nodes []string, wantPasswd string) resource.TestCheckFunc {
	return checkOnHosts(l, nodes, "getent passwd "+name, wantPasswd)
}

func checkHomeOwned(l *lab.Lab, node, home, owner string) resource.TestCheckFunc {
	return checkOnHost(l, node, "stat -c %u:%g "+home, owner)
}

// checkUserGone is the CheckDestroy: the account record is gone on every node and the home
// directory made on homeNode (none when empty) is still there.
func checkUserGone(l *lab.Lab, name string, nodes []string, homeNode string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range nodes {
			if out, _, err := l.Exec(context.Background(), n, "getent passwd "+name); err == nil {
				return fmt.Errorf("%s: account %s still exists after destroy: %s", n, name, out)
			}
		}
		if homeNode == "" {
			return nil
		}
		home := "/home/" + name
		if _, _, err := l.Exec(context.Background(), homeNode, "test -d "+home); err != nil {
			return fmt.Errorf("%s: home %s is gone after destroy; it must be kept", homeNode, home)
		}
		return nil
	}
}

func snapshotAccounts(t *testing.T, l *lab.Lab) string {
	var b strings.Builder
	for _, n := range labNodeNames(l) {
		fmt.Fprintf(&b, "%s:\n%s\n", n, onHost(t, l, n, "cat /etc/passwd /etc/group; ls /var/lib/gpucluster 2>/dev/null; cat /var/lib/gpucluster/* 2>/dev/null || true"))
	}
	return b.String()
}
