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

// beegfsRole is one pinned BeeGFS role of the upgrade test: its resource, node, package and service.
type beegfsRole struct {
	addr, node, pkg, service string
	daemon                   bool // a long-running process, whose binary the upgrade replaces
}

var beegfsRoles = []beegfsRole{
	{"gpucluster_beegfs_management.cluster", "login01", beegfs.MgmtdPackage, beegfs.ServiceMgmtd, true},
	{"gpucluster_beegfs_metadata.cluster", "login01", beegfs.MetaPackage, beegfs.ServiceMeta, true},
	{"gpucluster_beegfs_target.gpu01", "gpu01", beegfs.StoragePackage, beegfs.ServiceStorage, true},
	{"gpucluster_beegfs_client.login01", "login01", beegfs.ClientPackage, beegfs.ServiceClient, false},
	{"gpucluster_beegfs_client.gpu01", "gpu01", beegfs.ClientPackage, beegfs.ServiceClient, false},
}

// checkRunsInstalledBinary wants the service's main process to run the file its package
// installed now, not one an upgrade replaced under it.
func checkRunsInstalledBinary(l *lab.Lab, node, service string) resource.TestCheckFunc {
	return checkOnHost(l, node, `e=$(readlink /proc/$(systemctl show -P MainPID `+service+`)/exe); case "$e" in *deleted*|"") echo "stale $e";; *) echo current;; esac`, "current")
}

// TestAccBeegfsUpgrade_pinned sets up the guide's BeeGFS (management and metadata on login01, a
// target on gpu01, clients on both) at the lab's BeeGFS build while apt offers a later one,
// upgrades every role to the later build, restarting each service onto it with the database,
// the directories and the mounts kept, and refuses a downgrade at plan.
func TestAccBeegfsUpgrade_pinned(t *testing.T) {
	l := lab.Require(t)
	nodes := []string{lab.LoginHost, "gpu01"}
	installBeegfs(t, l, "login01", beegfs.MgmtdPackage, beegfs.MetaPackage)
	prepareFreshBeegfs(t, l, nodes)
	prepareStorageHost(t, l, "gpu01")
	a := repoVersion(t, l, beegfs.MgmtdPackage)
	b := a + "+gpucluster1"
	at := func(v string) string {
		return beegfsCluster{storage: []string{"gpu01"}, clients: nodes, version: v}.config(l)
	}
	atVersion := func(v string) resource.TestCheckFunc {
		checks := []resource.TestCheckFunc{
			checkOnHosts(l, nodes, "findmnt -n -o FSTYPE --mountpoint /home", labClientFSType),
		}
		for _, r := range beegfsRoles {
			checks = append(checks, checkPackageVersion(l, []string{r.node}, r.pkg, v))
			if r.daemon {
				checks = append(checks, checkRunsInstalledBinary(l, r.node, r.service))
			}
		}
		return resource.ComposeAggregateTestCheckFunc(checks...)
	}
	started := map[string]int64{}
	var kept string
	keptFiles := func() string {
		return onHost(t, l, "login01", "stat -c '%i' "+labDBFile+"; cat /beegfs/meta/nodeNumID") + "\n" +
			onHost(t, l, "gpu01", "cat /data/beegfs-storage/targetNumID")
	}
	recordStarts := func() {
		for _, r := range beegfsRoles {
			since, err := unitActiveSince(l, r.node, r.service)
			if err != nil {
				t.Fatal(err)
			}
			started[r.addr] = since
		}
		kept = keptFiles()
	}
	checkRestarted := func(want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, r := range beegfsRoles {
				since, err := unitActiveSince(l, r.node, r.service)
				if err != nil {
					return err
				}
				if restarted := since != started[r.addr]; restarted != want {
					return fmt.Errorf("%s on %s restarted = %v (active since %d, before the apply %d), want %v", r.service, r.node, restarted, since, started[r.addr], want)
				}
			}
			if now := keptFiles(); now != kept {
				return fmt.Errorf("the database inode and the IDs on disk are now\n%s\nwere\n%s", now, kept)
			}
			return nil
		}
	}
	versionIs := func(v string) []statecheck.StateCheck {
		var checks []statecheck.StateCheck
		for _, r := range beegfsRoles {
			checks = append(checks, statecheck.ExpectKnownValue(r.addr, tfjsonpath.New("version"), knownvalue.StringExact(v)))
		}
		return checks
	}
	var upgradePlan []plancheck.PlanCheck
	for _, r := range beegfsRoles {
		upgradePlan = append(upgradePlan, expectBeforeValue(r.addr, "version", a), plancheck.ExpectKnownValue(r.addr, tfjsonpath.New("version"), knownvalue.StringExact(b)))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkOnHosts(l, nodes, "findmnt -n /home >/dev/null && echo mounted || echo local", "local"),
		Steps: []resource.TestStep{
			{Config: at("8.4;reboot"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)beegfs_version.*must be a Debian package version`)},
			{
				PreConfig: func() {
					pkgs := []string{beegfs.MgmtdPackage, beegfs.MetaPackage, beegfs.StoragePackage, beegfs.ClientPackage}
					for _, h := range nodes {
						addSecondBuild(t, l, h, secondBuild{a: a, b: b, packages: pkgs})
					}
				},
				Config:            at(a),
				ConfigStateChecks: versionIs(a),
				Check:             atVersion(a),
			},
			{
				PreConfig:         recordStarts,
				Config:            at(b),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: upgradePlan},
				ConfigStateChecks: versionIs(b),
				Check:             resource.ComposeAggregateTestCheckFunc(atVersion(b), checkRestarted(true)),
			},
			{
				PreConfig:        recordStarts,
				Config:           at(b),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkRestarted(false),
			},
			{Config: at(a), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)BeeGFS Downgrade Refused.*beegfs_version asks for ` + regexp.QuoteMeta(a))},
		},
	})
}
