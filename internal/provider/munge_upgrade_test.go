package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
)

// TestAccMungeKey_pinnedUpgrade installs MUNGE at the lab's build while apt offers a later
// one, upgrades every node to the later build, and checks that munged runs the new binary with
// the same key and a credential still decodes across nodes; a downgrade and a bad version are
// refused at plan.
func TestAccMungeKey_pinnedUpgrade(t *testing.T) {
	l := lab.Require(t)
	all := labNodeNames(l)
	a := repoVersion(t, l, munge.Package)
	b := a + "+gpucluster1"
	config := func(version string) string {
		return mungeKeyConfig(l, "login01", all, fmt.Sprintf("  munge_version = %q\n", version))
	}
	versionsAre := func(v string) knownvalue.Check {
		want := map[string]knownvalue.Check{}
		for _, n := range all {
			want[n] = knownvalue.StringExact(v)
		}
		return knownvalue.MapExact(want)
	}
	atVersion := func(v string) resource.TestCheckFunc {
		return resource.ComposeAggregateTestCheckFunc(
			checkPackageVersion(l, all, munge.Package, v),
			checkPackageVersion(l, all, munge.LibPackage, v),
			// munged runs the installed binary, not one its package replaced under it.
			checkOnHosts(l, all, "readlink /proc/$(pidof munged)/exe", "/usr/sbin/munged"),
			checkKeyOnNodes(l, all),
			checkDecodes(l, "login01", "gpu01"),
			checkDecodes(l, "gpu02", "login01"),
		)
	}
	var started map[string]string
	sameKey := statecheck.CompareValue(compare.ValuesSame())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMungeStillRunning(l, all),
		Steps: []resource.TestStep{
			{Config: config("0.5.16;reboot"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)munge_version.*must be a Debian package version`)},
			{
				PreConfig: func() {
					for _, h := range all {
						addSecondBuild(t, l, h, secondBuild{a: a, b: b, packages: []string{munge.Package, munge.LibPackage}})
					}
				},
				Config: config(a),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("installed_version"), versionsAre(a)),
					sameKey.AddStateValue(mungeKeyAddr, tfjsonpath.New("fingerprint")),
				},
				Check: atVersion(a),
			},
			{
				PreConfig: func() { started = mungeStartTimes(t, l, all) },
				Config:    config(b),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate),
					expectBefore(mungeKeyAddr, "installed_version", "gpu01", a),
					plancheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("installed_version"), versionsAre(b)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("installed_version"), versionsAre(b)),
					sameKey.AddStateValue(mungeKeyAddr, tfjsonpath.New("fingerprint")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					atVersion(b),
					func(*terraform.State) error { return checkRestarted(l, all, started, true) },
				),
			},
			{
				PreConfig:        func() { started = mungeStartTimes(t, l, all) },
				Config:           config(b),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPackageVersion(l, all, munge.Package, b),
					func(*terraform.State) error { return checkRestarted(l, all, started, false) },
				),
			},
			{Config: config(a), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)MUNGE Downgrade Refused.*munge_version asks for ` + regexp.QuoteMeta(a))},
		},
	})
}
