package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The lab's Slurm build (Debian 13's) and a second build of the same packages, repacked on
// the lab hosts with a later version, so an upgrade between them really runs apt and restarts.
const (
	labSlurmBuildA  = "24.11.5-4+deb13u1"
	labSlurmBuildB  = labSlurmBuildA + "+gpucluster1"
	slurmController = "gpucluster_slurm_controller.test"
)

// repackedPackages are the packages of the lab's cluster that depend on each other's exact
// version: the second build holds them all.
var repackedPackages = []string{"slurm-client", "slurm-wlm-basic-plugins", "slurm-wlm-mysql-plugin", "slurmctld", "slurmd", "slurmdbd"}

// addSecondSlurmBuild adds build B of the lab's Slurm packages to host's local repository.
func addSecondSlurmBuild(t *testing.T, l *lab.Lab, host string) {
	t.Helper()
	addSecondBuild(t, l, host, secondBuild{a: labSlurmBuildA, b: labSlurmBuildB, packages: repackedPackages})
}

// unitActiveSince is when systemd last started unit on host, on the clock every lab host shares.
func unitActiveSince(l *lab.Lab, host, unit string) (int64, error) {
	out, err := onHostErr(l, host, "systemctl show -P ActiveEnterTimestampMonotonic "+unit)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(out, 10, 64)
}

// checkUpgradeOrder wants slurmdbd, slurmctld and each slurmd restarted since before, in
// Slurm's order, and the state backup written before slurmctld started again. It records
// slurmctld's start for the later steps.
func checkUpgradeOrder(l *lab.Lab, gpus []string, before map[string]int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		units := [][2]string{{"login01", "slurmdbd"}, {"login01", "slurmctld"}}
		for _, g := range gpus {
			units = append(units, [2]string{g, "slurmd"})
		}
		at := map[string]int64{}
		for _, u := range units {
			key := u[0] + "/" + u[1]
			since, err := unitActiveSince(l, u[0], u[1])
			if err != nil {
				return err
			}
			if since <= before[key] {
				return fmt.Errorf("%s on %s was not restarted (active since %d, before the apply %d)", u[1], u[0], since, before[key])
			}
			at[key] = since
		}
		dbd, ctld := at["login01/slurmdbd"], at["login01/slurmctld"]
		if dbd >= ctld {
			return fmt.Errorf("slurmdbd started at %d, not before slurmctld at %d", dbd, ctld)
		}
		for _, g := range gpus {
			if at[g+"/slurmd"] <= ctld {
				return fmt.Errorf("slurmd on %s started at %d, not after slurmctld at %d", g, at[g+"/slurmd"], ctld)
			}
		}
		before["slurmctld-after"] = ctld
		return checkBackupBeforeStart(l)
	}
}

// checkBackupBeforeStart wants one copy of the state directory, holding slurmctld's state
// files, written before slurmctld's start.
func checkBackupBeforeStart(l *lab.Lab) error {
	out, err := onHostErr(l, "login01", "ls "+slurm.BackupDir+"/slurmctld-state-*.tar.gz")
	if err != nil {
		return err
	}
	files := strings.Fields(out)
	if len(files) != 1 {
		return fmt.Errorf("want one state backup in %s, got %q", slurm.BackupDir, out)
	}
	list, err := onHostErr(l, "login01", "tar -tzf "+files[0])
	if err != nil {
		return err
	}
	if !strings.Contains(list, "./node_state") {
		return fmt.Errorf("backup %s lists %q, want slurmctld's node_state", files[0], list)
	}
	times, err := onHostErr(l, "login01", "stat -c %.6Y "+files[0]+"; systemctl show -P ActiveEnterTimestamp --timestamp=us+utc slurmctld")
	if err != nil {
		return err
	}
	mtime, started, _ := strings.Cut(times, "\n")
	secs, err := strconv.ParseFloat(mtime, 64)
	if err != nil {
		return fmt.Errorf("backup's mtime %q: %w", mtime, err)
	}
	start, err := time.Parse("Mon 2006-01-02 15:04:05.000000 MST", started)
	if err != nil {
		return fmt.Errorf("slurmctld's start %q: %w", started, err)
	}
	if written := time.UnixMicro(int64(secs * 1e6)); !written.Before(start) {
		return fmt.Errorf("backup written at %s, slurmctld started at %s: want the backup first", written.UTC(), start)
	}
	return nil
}

// checkAccountingDumpBeforeUpgrade checks on host, where slurmdbd runs, that its upgrade left
// one dump of the accounting database in the backup directory, root's alone, a real dump
// without the database password, written before dpkg began upgrading slurmdbd's package.
func checkAccountingDumpBeforeUpgrade(l *lab.Lab, host string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		script := "cd " + slurm.BackupDir + " && ls slurmdbd-*.sql.gz | wc -l && stat -c '%a %U %Y' slurmdbd-*.sql.gz && " +
			"gzip -dc slurmdbd-*.sql.gz | grep -c -e 'CREATE TABLE `cluster_table`' -e 'CREATE TABLE `cluster_job_table`' -e " + transport.Quote(accountingPassword) + "; " +
			"date -d \"$(awk '$3 == \"upgrade\" && $4 ~ /^slurmdbd:/ {t = $1 \" \" $2} END {print t}' /var/log/dpkg.log)\" +%s"
		out, err := onHostErr(l, host, script)
		if err != nil {
			return err
		}
		f := strings.Fields(out)
		if len(f) != 6 || f[0] != "1" || f[1] != "600" || f[2] != "root" || f[4] != "2" {
			return fmt.Errorf("on %s, want one dump of mode 600 owned by root holding cluster_table and cluster_job_table and not the password (count, mode, owner, mtime, matches, upgrade): %q", host, out)
		}
		written, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return err
		}
		upgraded, err := strconv.ParseInt(f[5], 10, 64)
		if err != nil {
			return err
		}
		if written > upgraded {
			return fmt.Errorf("on %s, the dump was written at %s, after dpkg upgraded slurmdbd at %s", host, f[3], f[5])
		}
		return nil
	}
}

func checkPackageVersion(l *lab.Lab, hosts []string, pkg, want string) resource.TestCheckFunc {
	return checkOnHosts(l, hosts, "dpkg-query -W -f '${Version}' "+pkg, want)
}

// TestAccSlurmUpgrade_ordered installs the cluster at build A while apt offers build B, adds
// accounting beside the pinned controller, then upgrades everything to B.
func TestAccSlurmUpgrade_ordered(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	at := func(version string, accounting bool) labCluster {
		c := labCluster{computeNodes: gpus}
		if accounting {
			c.extra, c.activationDeps = accountingConfig(1, ""), []string{slurmAccountingAddr}
		}
		c.controllerExtra = fmt.Sprintf("  slurm_version = %q\n", version)
		c.computeExtra = c.controllerExtra
		return c
	}
	pw := passwordVariable(accountingPassword)
	before := map[string]int64{}
	refused := func(version, want string) resource.TestStep {
		c := at(labSlurmBuildB, true)
		c.controllerExtra = fmt.Sprintf("  slurm_version = %q\n", version)
		return resource.TestStep{Config: c.config(l), ConfigVariables: pw, PlanOnly: true, ExpectError: regexp.MustCompile(want)}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeAggregateTestCheckFunc(checkClusterDestroyed(l, gpus), checkAccountingDestroyed(l)),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					for _, h := range append([]string{"login01"}, gpus...) {
						addSecondSlurmBuild(t, l, h)
					}
				},
				Config: at(labSlurmBuildA, false).config(l),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSinfo(l, "2:idle"),
					checkPackageVersion(l, []string{"login01"}, "slurmctld", labSlurmBuildA),
					checkPackageVersion(l, gpus, "slurmd", labSlurmBuildA),
				),
			},
			{
				Config:          at(labSlurmBuildA, true).config(l),
				ConfigVariables: pw,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPackageVersion(l, []string{"login01"}, "slurmdbd", labSlurmBuildA),
					checkPackageVersion(l, []string{"login01"}, "slurmctld", labSlurmBuildA),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
				),
			},
			{
				PreConfig: func() {
					onHost(t, l, "login01", "rm -rf "+slurm.BackupDir)
					for _, u := range [][2]string{{"login01", "slurmdbd"}, {"login01", "slurmctld"}, {"gpu01", "slurmd"}, {"gpu02", "slurmd"}} {
						since, err := unitActiveSince(l, u[0], u[1])
						if err != nil {
							t.Fatal(err)
						}
						before[u[0]+"/"+u[1]] = since
					}
				},
				Config:          at(labSlurmBuildB, true).config(l),
				ConfigVariables: pw,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectBeforeValue(slurmController, "installed_version", labSlurmBuildA),
					plancheck.ExpectKnownValue(slurmController, tfjsonpath.New("installed_version"), knownvalue.StringExact(labSlurmBuildB)),
					expectBeforeValue("gpucluster_slurm_compute.gpu01", "installed_version", labSlurmBuildA),
					plancheck.ExpectKnownValue("gpucluster_slurm_compute.gpu01", tfjsonpath.New("installed_version"), knownvalue.StringExact(labSlurmBuildB)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPackageVersion(l, []string{"login01"}, "slurmctld", labSlurmBuildB),
					checkPackageVersion(l, []string{"login01"}, "slurmdbd", labSlurmBuildB),
					checkPackageVersion(l, gpus, "slurmd", labSlurmBuildB),
					checkUpgradeOrder(l, gpus, before),
					checkAccountingDumpBeforeUpgrade(l, "login01"),
					checkPing(l),
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
					checkSinfo(l, "2:idle"),
				),
			},
			{
				Config:           at(labSlurmBuildB, true).config(l),
				ConfigVariables:  pw,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					if err := checkBackupBeforeStart(l); err != nil {
						return err
					}
					since, err := unitActiveSince(l, "login01", "slurmctld")
					if err != nil {
						return err
					}
					if since != before["slurmctld-after"] {
						return fmt.Errorf("slurmctld active since %d, after the upgrade %d: the no-op apply restarted it", since, before["slurmctld-after"])
					}
					return nil
				},
			},
			refused("26.05.1-1", `(?s)Slurm Upgrade Refused.*26\.05\.1-1 \(release 26\.05\) is 3 major\s+releases`),
			refused(labSlurmBuildA, `(?s)Slurm Upgrade Refused.*cannot\s+be\s+downgraded`),
		},
	})
}

// TestAccSlurmUpgrade_accountingElsewhere puts slurmdbd on gpu02, a node with no other Slurm
// package: it comes at the controller's pinned build, not the newer one apt offers, and the
// controller's upgrade restarts it there before slurmctld.
func TestAccSlurmUpgrade_accountingElsewhere(t *testing.T) {
	l := lab.Require(t)
	at := func(version string) labCluster {
		pin := fmt.Sprintf("  slurm_version = %q\n", version)
		return labCluster{computeNodes: []string{"gpu01"}, controllerExtra: pin, computeExtra: pin,
			extra: accountingConfig(1, "  node = \"gpu02\"\n"), activationDeps: []string{slurmAccountingAddr}}
	}
	pw := passwordVariable(accountingPassword)
	before := map[string]int64{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkClusterDestroyed(l, []string{"gpu01"}),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					for _, h := range labNodeNames(l) {
						addSecondSlurmBuild(t, l, h)
					}
				},
				Config:          at(labSlurmBuildA).config(l),
				ConfigVariables: pw,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPackageVersion(l, []string{"gpu02"}, "slurmdbd", labSlurmBuildA),
					checkPackageVersion(l, []string{"login01"}, "slurmctld", labSlurmBuildA),
					checkSinfo(l, "1:idle"),
				),
			},
			{
				PreConfig: func() {
					onHost(t, l, "login01", "rm -rf "+slurm.BackupDir)
					onHost(t, l, "gpu02", "rm -rf "+slurm.BackupDir)
					for _, u := range [][2]string{{"gpu02", "slurmdbd"}, {"login01", "slurmctld"}} {
						since, err := unitActiveSince(l, u[0], u[1])
						if err != nil {
							t.Fatal(err)
						}
						before[u[0]] = since
					}
				},
				Config:          at(labSlurmBuildB).config(l),
				ConfigVariables: pw,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPackageVersion(l, []string{"gpu02"}, "slurmdbd", labSlurmBuildB),
					checkPackageVersion(l, []string{"login01"}, "slurmctld", labSlurmBuildB),
					checkPackageVersion(l, []string{"gpu01"}, "slurmd", labSlurmBuildB),
					checkAccountingDumpBeforeUpgrade(l, "gpu02"),
					func(*terraform.State) error {
						dbd, err := unitActiveSince(l, "gpu02", "slurmdbd")
						if err != nil {
							return err
						}
						ctld, err := unitActiveSince(l, "login01", "slurmctld")
						if err != nil {
							return err
						}
						if dbd <= before["gpu02"] || ctld <= before["login01"] || dbd >= ctld {
							return fmt.Errorf("slurmdbd on gpu02 active since %d (before %d), slurmctld since %d (before %d): want both restarted, slurmdbd first",
								dbd, before["gpu02"], ctld, before["login01"])
						}
						return checkBackupBeforeStart(l)
					},
					checkOnHost(l, "login01", "sacctmgr -nP show cluster format=cluster", "cluster"),
					checkSinfo(l, "1:idle"),
				),
			},
		},
	})
}
