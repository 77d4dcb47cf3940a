package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

// groupAndUserConfig declares a group and a user whose primary group it is, on nodes, as
// useradd makes them (shell /bin/sh).
func groupAndUserConfig(l *lab.Lab, group string, gid int, user string, uid int, nodes []string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_group" "test" {
  name  = %[1]q
  gid   = %[2]d
  nodes = %[5]s
}

resource "gpucluster_user" "test" {
  name  = %[3]q
  uid   = %[4]d
  group = gpucluster_group.test.id
  shell = "/bin/sh"
  nodes = %[5]s
}
`, group, gid, user, uid, hclList(nodes))
}

// uidLedgerDigest is the sha256 of the UID ledger on login01, or "absent".
func uidLedgerDigest(t *testing.T, l *lab.Lab) string {
	return onHost(t, l, lab.LoginHost, fmt.Sprintf("if [ -e %[1]s ]; then sha256sum %[1]s; else echo absent; fi", users.LedgerPath))
}

// forgetInLedger deletes the ledger lines of names on login01 now and when the test ends, so
// a test that retires their IDs at destroy can run again on the same lab.
func forgetInLedger(t *testing.T, l *lab.Lab, names ...string) {
	t.Helper()
	script := fmt.Sprintf(`[ ! -e %[1]s ] || sed -i -E '/^(user|group) (%[2]s) /d' %[1]s`, users.LedgerPath, strings.Join(names, "|"))
	onHost(t, l, lab.LoginHost, script)
	t.Cleanup(func() { onHost(t, l, lab.LoginHost, script) })
}

// checkLedgerRecords wants the UID ledger on login01 to hold each line of want.
func checkLedgerRecords(l *lab.Lab, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, line := range want {
			if _, err := onHostErr(l, lab.LoginHost, fmt.Sprintf("grep -qxF %q %s", line, users.LedgerPath)); err != nil {
				return fmt.Errorf("%s does not hold %q: %w", users.LedgerPath, line, err)
			}
		}
		return nil
	}
}

// recordedChecks want recorded = true in the state of the group and the user.
var recordedChecks = []statecheck.StateCheck{
	statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
	statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
}

// An import block is imported during the plan, and a plan must not change a host: import still
// refuses a UID the ledger gave to another name, two plans of an import block leave the ledger
// on login01 byte for byte as it was, the second is not refused, and the apply records the UID
// and the GID, as updates of `recorded` alone, changing nothing under /etc on any node.
func TestAccUser_importBlockPlanWritesNothing(t *testing.T) {
	l := lab.Require(t)
	const group, gid, user, uid = "tacc_impgrp", 2801, "tacc_imported", 1801
	nodes := labNodeNames(l)
	forgetInLedger(t, l, group, user, "tacc_formerly")
	for _, n := range nodes {
		onHost(t, l, n, fmt.Sprintf("groupadd -g %d %s && useradd -M -u %d -g %s -s /bin/sh %s", gid, group, uid, group, user))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_, _ = onHostErr(l, n, fmt.Sprintf("userdel %s; groupdel %s", user, group))
		}
	})
	ids := strings.Join(nodes, ",")
	config := groupAndUserConfig(l, group, gid, user, uid, nodes) +
		importBlock("gpucluster_group.test", strconv.Quote(group+"@"+ids)) +
		importBlock("gpucluster_user.test", strconv.Quote(user+"@"+ids))
	var before, etc string
	ledgerUnchanged := func() {
		if after := uidLedgerDigest(t, l); after != before {
			t.Fatalf("a plan changed %s on login01: sha256 %s before, %s after", users.LedgerPath, before, after)
		}
	}
	planOnly := resource.TestStep{Config: config, PlanOnly: true, ExpectNonEmptyPlan: true}
	firstPlan, secondPlan := planOnly, planOnly
	firstPlan.PreConfig = func() {
		onHost(t, l, lab.LoginHost, fmt.Sprintf(`sed -i -E '/^user tacc_formerly /d' %s`, users.LedgerPath))
		before = uidLedgerDigest(t, l)
	}
	secondPlan.PreConfig = ledgerUnchanged
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkUserGone(l, user, nodes, ""),
			checkGroupGone(l, group, nodes),
		),
		Steps: []resource.TestStep{
			{
				// Import still reads the ledger and refuses what it refused when it claimed.
				PreConfig: func() {
					onHost(t, l, lab.LoginHost, fmt.Sprintf("mkdir -p /var/lib/gpucluster && echo 'user tacc_formerly %d retired' >> %s", uid, users.LedgerPath))
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)ID Already Used.*login01.*first given to user tacc_formerly`),
			},
			firstPlan,
			secondPlan,
			{
				PreConfig: func() {
					ledgerUnchanged()
					etc = hostSnapshot(t, l, false)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectRecordedOnly{"gpucluster_group.test", "gpucluster_user.test"}},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: append(recordedChecks, hostCheck(func() error {
					return sameSnapshot("recording the imported accounts", etc, hostSnapshot(t, l, false))
				})),
				Check: checkLedgerRecords(l, fmt.Sprintf("group %s %d active", group, gid), fmt.Sprintf("user %s %d active", user, uid)),
			},
		},
	})
}

// A ledger line deleted by hand reads as recorded = false; the plan shows recorded = false ->
// true and nothing else, and the apply writes the line back and changes nothing under /etc.
func TestAccUser_ledgerLineDeletedByHand(t *testing.T) {
	l := lab.Require(t)
	const group, gid, user, uid = "tacc_relgrp", 2802, "tacc_reluser", 1802
	nodes := labNodeNames(l)
	forgetInLedger(t, l, group, user)
	config := groupAndUserConfig(l, group, gid, user, uid, nodes)
	lines := []string{fmt.Sprintf("group %s %d active", group, gid), fmt.Sprintf("user %s %d active", user, uid)}
	var etc string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkUserGone(l, user, nodes, ""),
			checkGroupGone(l, group, nodes),
		),
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigStateChecks: recordedChecks,
				Check:             checkLedgerRecords(l, lines...),
			},
			{
				PreConfig: func() {
					onHost(t, l, lab.LoginHost, fmt.Sprintf(`sed -i -E '/^(user %s|group %s) /d' %s`, user, group, users.LedgerPath))
					etc = hostSnapshot(t, l, false)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectRecordedOnly{"gpucluster_group.test", "gpucluster_user.test"}},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: append(recordedChecks, hostCheck(func() error {
					return sameSnapshot("writing the ledger lines back", etc, hostSnapshot(t, l, false))
				})),
				Check: checkLedgerRecords(l, lines...),
			},
		},
	})
}
