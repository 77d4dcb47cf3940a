package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// beegfsPinnedConfig is the guide's login01, management and metadata, both pinned to version.
func beegfsPinnedConfig(l *lab.Lab, version string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_management" "test" {
  node           = "login01"
  beegfs_version = %[1]q
}

resource "gpucluster_beegfs_metadata" "test" {
  node           = "login01"
  mgmtd_host     = "login01"
  beegfs_version = %[1]q
  depends_on     = [gpucluster_beegfs_management.test]
}
`, version)
}

// checkRunsInstalledBinary wants the service's main process to run the file its package
// installed now, not one an upgrade replaced under it.
func checkRunsInstalledBinary(l *lab.Lab, node, service string) resource.TestCheckFunc {
	return checkOnHost(l, node, `e=$(readlink /proc/$(systemctl show -P MainPID `+service+`)/exe); case "$e" in *deleted*|"") echo "stale $e";; *) echo current;; esac`, "current")
}

// TestAccBeegfsUpgrade_pinned sets up management and metadata at the lab's BeeGFS build while
// apt offers a later one, upgrades both to the later build, restarting each service onto it
// with its database and directory kept, and refuses a downgrade at plan.
func TestAccBeegfsUpgrade_pinned(t *testing.T) {
	l := lab.Require(t)
	pkgs := []string{beegfs.MgmtdPackage, beegfs.MetaPackage}
	installBeegfs(t, l, "login01", pkgs...)
	a := repoVersion(t, l, beegfs.MgmtdPackage)
	b := a + "+gpucluster1"
	services := []string{beegfs.ServiceMgmtd, beegfs.ServiceMeta}
	atVersion := func(v string) resource.TestCheckFunc {
		checks := []resource.TestCheckFunc{checkMgmtdOnController(l)}
		for i, p := range pkgs {
			checks = append(checks, checkPackageVersion(l, []string{"login01"}, p, v), checkRunsInstalledBinary(l, "login01", services[i]))
		}
		return resource.ComposeAggregateTestCheckFunc(checks...)
	}
	started := map[string]int64{}
	var db, ids string
	recordStarts := func() {
		for _, s := range services {
			since, err := unitActiveSince(l, "login01", s)
			if err != nil {
				t.Fatal(err)
			}
			started[s] = since
		}
		db = onHost(t, l, "login01", "stat -c '%i' "+labDBFile)
		ids = onHost(t, l, "login01", "stat -c '%i %Y' "+labMetaPath+"/nodeNumID")
	}
	checkRestarted := func(want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, s := range services {
				since, err := unitActiveSince(l, "login01", s)
				if err != nil {
					return err
				}
				if restarted := since != started[s]; restarted != want {
					return fmt.Errorf("%s restarted = %v (active since %d, before the apply %d), want %v", s, restarted, since, started[s], want)
				}
			}
			return nil
		}
	}
	versionIs := func(v string) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("version"), knownvalue.StringExact(v)),
			statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("version"), knownvalue.StringExact(v)),
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMetaDestroyed(l),
		Steps: []resource.TestStep{
			{Config: beegfsPinnedConfig(l, "8.4;reboot"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)beegfs_version.*must be a Debian package version`)},
			{
				PreConfig:         func() { addSecondBuild(t, l, "login01", secondBuild{a: a, b: b, packages: pkgs}) },
				Config:            beegfsPinnedConfig(l, a),
				ConfigStateChecks: versionIs(a),
				Check:             atVersion(a),
			},
			{
				PreConfig: recordStarts,
				Config:    beegfsPinnedConfig(l, b),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectBeforeValue(mgmtdAddr, "version", a),
					plancheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("version"), knownvalue.StringExact(b)),
					expectBeforeValue(metaAddr, "version", a),
					plancheck.ExpectKnownValue(metaAddr, tfjsonpath.New("version"), knownvalue.StringExact(b)),
				}},
				ConfigStateChecks: versionIs(b),
				Check: resource.ComposeAggregateTestCheckFunc(
					atVersion(b),
					checkRestarted(true),
					// The database is the one set up at build a, not a new one (read when the check runs).
					func(s *terraform.State) error { return checkOnHost(l, "login01", "stat -c '%i' "+labDBFile, db)(s) },
					checkNodeNumIDUnchanged(l, &ids),
				),
			},
			{
				PreConfig:        recordStarts,
				Config:           beegfsPinnedConfig(l, b),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkRestarted(false),
			},
			{Config: beegfsPinnedConfig(l, a), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)BeeGFS Downgrade Refused.*beegfs_version asks for ` + regexp.QuoteMeta(a))},
		},
	})
}
