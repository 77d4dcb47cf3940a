package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// A group that login01 already had, with the same GID, is taken over there and left in place
// by destroy; on the other nodes the resource created it and destroy removes it.
func TestAccGroup_adoptsExistingAndLeavesItAtDestroy(t *testing.T) {
	l := lab.Require(t)
	const name, gid = "tacc_pre", 2301
	all := labNodeNames(l)
	onHost(t, l, "login01", fmt.Sprintf("groupadd -g %d %s", gid, name))
	t.Cleanup(func() { _, _, _ = l.Exec(context.Background(), "login01", "groupdel "+name) })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if _, err := onHostErr(l, "login01", "getent group "+name); err != nil {
				return fmt.Errorf("destroy removed the group that login01 had before: %w", err)
			}
			return checkGroupGone(l, name, []string{"gpu01", "gpu02"})(s)
		},
		Steps: []resource.TestStep{{
			Config: groupConfig(l, name, gid, all),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("adopted_on"),
					knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("login01")})),
			},
			Check: checkGroupOnHosts(l, name, gid, all),
		}},
	})
}

func TestAccAccounts_refuseIDsHeldElsewhere(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	// Made by hand, so the ledger has never seen them.
	onHost(t, l, "gpu02", "useradd -M -u 1501 -g users tacc_handmade && groupadd -g 2501 tacc_handgrp")
	onHost(t, l, "gpu01", "useradd -M -u 1502 -g users tacc_other")
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), "gpu02", "userdel tacc_handmade; groupdel tacc_handgrp")
		_, _, _ = l.Exec(context.Background(), "gpu01", "userdel tacc_other")
	})
	before := snapshotAccounts(t, l)
	cases := map[string]struct{ config, want string }{
		"uid held by another user":  {userConfig(l, "tacc_newcomer", 1501, "/bin/bash", nodes), `(?s)ID Already Used.*uid 1501 already belongs to user tacc_handmade.*gpu02`},
		"gid held by another group": {groupConfig(l, "tacc_newgrp", 2501, nodes), `(?s)ID Already Used.*gid 2501 already belongs to group tacc_handgrp.*gpu02`},
		"account exists with another uid": {userConfig(l, "tacc_other", 1503, "/bin/bash", nodes),
			`(?s)Account Exists With Another ID.*user tacc_other already exists there with uid 1502.*gpu01`},
	}
	expectRefused(t, cases)
	if after := snapshotAccounts(t, l); after != before {
		t.Errorf("a refused plan changed accounts or the ledger:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// Growing the cluster: a custom group and its user gain a node in one apply.
func TestAccUser_groupAndUserGrowTogether(t *testing.T) {
	l := lab.Require(t)
	all := labNodeNames(l)
	config := func(nodes []string) string {
		return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_group" "research" {
  name  = "tacc_research"
  gid   = 2401
  nodes = %[1]s
}

resource "gpucluster_user" "test" {
  name  = "tacc_grower"
  uid   = 1601
  group = gpucluster_group.research.id
  nodes = %[1]s
}
`, hclList(nodes))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := checkUserGone(l, "tacc_grower", all, "")(s); err != nil {
				return err
			}
			return checkGroupGone(l, "tacc_research", all)(s)
		},
		Steps: []resource.TestStep{
			{Config: config(all[:2])},
			{
				// The plan shows only what changes: the group's id stays known, so the user's group
				// does not show as (known after apply), and a node the accounts are added to is
				// known after apply, not already "in sync".
				Config: config(all),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue("gpucluster_group.research", tfjsonpath.New("id"), knownvalue.StringExact("tacc_research")),
						plancheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("group"), knownvalue.StringExact("tacc_research")),
						plancheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("node_status").AtMapKey(all[0]), knownvalue.StringExact(inSync)),
						plancheck.ExpectUnknownValue("gpucluster_user.test", tfjsonpath.New("node_status").AtMapKey(all[2])),
						plancheck.ExpectUnknownValue("gpucluster_group.research", tfjsonpath.New("node_status").AtMapKey(all[2])),
					},
				},
				Check: checkAccountOnHosts(l, "tacc_grower", all, "tacc_grower:x:1601:2401::/home/tacc_grower:/bin/bash"),
			},
		},
	})
}

func TestAccUser_needsLoginNode(t *testing.T) {
	l := lab.Require(t)
	config := fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  known_hosts_file = %q
  sudo_password    = %q
  jump_host        = "10.0.0.10"
}

resource "gpucluster_user" "test" {
  name  = "tacc_noledger"
  uid   = 1701
  group = "users"
  nodes = ["10.0.0.10"]
}
`, l.AdminUser, l.AdminKeyPath, l.KnownHostsPath, l.AdminPassword)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    []resource.TestStep{{Config: config, ExpectError: regexp.MustCompile(`Missing Login Node`)}},
	})
}
