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

// importedAccounts is a group and a user whose primary group it is, as useradd makes them
// (shell /bin/sh).
type importedAccounts struct {
	group, user string
	gid, uid    int
}

func (a importedAccounts) config(l *lab.Lab, nodes []string) string {
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
`, a.group, a.gid, a.user, a.uid, hclList(nodes))
}

// gone is the CheckDestroy: both accounts are gone from every node.
func (a importedAccounts) gone(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(checkUserGone(l, a.user, nodes, ""), checkGroupGone(l, a.group, nodes))
}

// recordingStep applies config after before, when only the ledger lines of both accounts are
// due: the plan updates recorded alone, the apply writes the lines, and no file under /etc
// changes on any node.
func (a importedAccounts) recordingStep(t *testing.T, l *lab.Lab, config string, before func()) resource.TestStep {
	var etc string
	return resource.TestStep{
		PreConfig: func() {
			before()
			etc = hostSnapshot(t, l, false)
		},
		Config: config,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{expectRecordedOnly{"gpucluster_group.test", "gpucluster_user.test"}},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
		ConfigStateChecks: append(a.recordedChecks(), hostCheck(func() error {
			return sameSnapshot("recording the ledger lines", etc, hostSnapshot(t, l, false))
		})),
		Check: a.checkLedgerRecords(l),
	}
}

// recordedChecks want recorded = true in the state of the group and the user.
func (a importedAccounts) recordedChecks() []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue("gpucluster_group.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
		statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
	}
}

// checkLedgerRecords wants the UID ledger on login01 to hold both accounts' active lines.
func (a importedAccounts) checkLedgerRecords(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, line := range []string{fmt.Sprintf("group %s %d active", a.group, a.gid), fmt.Sprintf("user %s %d active", a.user, a.uid)} {
			if _, err := onHostErr(l, lab.LoginHost, fmt.Sprintf("grep -qxF %q %s", line, users.LedgerPath)); err != nil {
				return fmt.Errorf("%s does not hold %q: %w", users.LedgerPath, line, err)
			}
		}
		return nil
	}
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

// An import block is imported during the plan, and a plan must not change a host: import still
// refuses a UID the ledger gave to another name, two plans of an import block leave the ledger
// on login01 byte for byte as it was, the second is not refused, and the apply records the UID
// and the GID, as updates of `recorded` alone, changing nothing under /etc on any node.
func TestAccUser_importBlockPlanWritesNothing(t *testing.T) {
	l := lab.Require(t)
	a := importedAccounts{group: "tacc_impgrp", gid: 2951, user: "tacc_imported", uid: 1951}
	nodes := labNodeNames(l)
	forgetInLedger(t, l, a.group, a.user, "tacc_formerly")
	for _, n := range nodes {
		onHost(t, l, n, fmt.Sprintf("groupadd -g %d %s && useradd -M -u %d -g %s -s /bin/sh %s", a.gid, a.group, a.uid, a.group, a.user))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_, _ = onHostErr(l, n, fmt.Sprintf("userdel %s; groupdel %s", a.user, a.group))
		}
	})
	ids := strings.Join(nodes, ",")
	config := a.config(l, nodes) +
		importBlock("gpucluster_group.test", strconv.Quote(a.group+"@"+ids)) +
		importBlock("gpucluster_user.test", strconv.Quote(a.user+"@"+ids))
	var before string
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
		CheckDestroy:             a.gone(l, nodes),
		Steps: []resource.TestStep{
			{
				// Import still reads the ledger and refuses what it refused when it claimed.
				PreConfig: func() {
					onHost(t, l, lab.LoginHost, fmt.Sprintf("mkdir -p /var/lib/gpucluster && echo 'user tacc_formerly %d retired' >> %s", a.uid, users.LedgerPath))
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)ID Already Used.*login01.*first given to user tacc_formerly`),
			},
			firstPlan,
			secondPlan,
			a.recordingStep(t, l, config, ledgerUnchanged),
		},
	})
}

// A ledger line deleted by hand reads as recorded = false; the plan shows recorded = false ->
// true and nothing else, and the apply writes the line back and changes nothing under /etc.
func TestAccUser_ledgerLineDeletedByHand(t *testing.T) {
	l := lab.Require(t)
	a := importedAccounts{group: "tacc_relgrp", gid: 2952, user: "tacc_reluser", uid: 1952}
	nodes := labNodeNames(l)
	forgetInLedger(t, l, a.group, a.user)
	config := a.config(l, nodes)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.gone(l, nodes),
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigStateChecks: a.recordedChecks(),
				Check:             a.checkLedgerRecords(l),
			},
			a.recordingStep(t, l, config, func() {
				onHost(t, l, lab.LoginHost, fmt.Sprintf(`sed -i -E '/^(user %s|group %s) /d' %s`, a.user, a.group, users.LedgerPath))
			}),
		},
	})
}
