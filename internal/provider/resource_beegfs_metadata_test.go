package provider

import (
	"fmt"
	"regexp"
	"strings"
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

const (
	metaAddr      = "gpucluster_beegfs_metadata.test"
	labMetaPath   = "/beegfs/meta"
	otherMetaPath = "/beegfs/meta-elsewhere"
)

// metaConfig is the guide's login01: management first (it puts conn.auth there), then meta.
func metaConfig(l *lab.Lab, mgmtdHost string) string {
	return providerConfig(l, "") + mgmtdResource(nil) + fmt.Sprintf(`
resource "gpucluster_beegfs_metadata" "test" {
  node       = "login01"
  mgmtd_host = %q
  depends_on = [gpucluster_beegfs_management.test]
}
`, mgmtdHost)
}

// TestAccBeegfsMetadata_lifecycle sets up metadata node 1 with the interlock, changes the
// management host in place, imports, and repairs an interlock key and a service changed by hand.
func TestAccBeegfsMetadata_lifecycle(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, "login01", "beegfs-mgmtd", "beegfs-meta")
	uuid := onHost(t, l, "login01", "findmnt -n -o UUID --target /beegfs")
	if uuid == "" {
		t.Fatal("login01: /beegfs reports no filesystem UUID; the lab disk is missing")
	}
	var ids string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMetaDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config: metaConfig(l, "10.0.0.10"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("id"), knownvalue.StringExact("login01:"+labMetaPath)),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("path"), knownvalue.StringExact(labMetaPath)),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("node_num_id"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("fs_uuid"), knownvalue.StringExact(uuid)),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("mountpoint"), knownvalue.StringExact("/beegfs")),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMetaOnHost(l, uuid, "10.0.0.10"),
					func(*terraform.State) error {
						var err error
						ids, err = onHostErr(l, "login01", "stat -c '%i %Y' "+labMetaPath+"/nodeNumID")
						return err
					},
				),
			},
			{
				Config: metaConfig(l, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(metaAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMetaOnHost(l, uuid, "login01"), checkNodeNumIDUnchanged(l, &ids)),
			},
			{
				ResourceName:      metaAddr,
				ImportState:       true,
				ImportStateIdFunc: idInState(metaAddr),
				ImportStateVerify: true,
			},
			{
				// The guide's warning: someone turns first-run init back on by hand.
				PreConfig: func() {
					onHost(t, l, "login01", "sed -i 's/^\\(storeAllowFirstRunInit *= *\\).*/\\1true/' "+beegfs.MetaConfPath)
				},
				Config: metaConfig(l, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(metaAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(metaAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMetaOnHost(l, uuid, "login01"), checkNodeNumIDUnchanged(l, &ids)),
			},
			{
				PreConfig: func() {
					onHost(t, l, "login01", "systemctl stop "+beegfs.ServiceMeta+" && rm -f "+beegfs.MetaDropInPath+" && systemctl daemon-reload")
				},
				Config: metaConfig(l, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectNonEmptyPlan()},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMetaOnHost(l, uuid, "login01"), checkNodeNumIDUnchanged(l, &ids)),
			},
			{
				// Another node_num_id means a replacement that would set up the directory again.
				// Terraform plans the create half of a replacement with no prior state, so the
				// refusal comes at plan, before its destroy could stop beegfs-meta.
				Config:      strings.Replace(metaConfig(l, "login01"), `mgmtd_host = "login01"`, "mgmtd_host = \"login01\"\n  node_num_id = 2", 1),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Metadata Directory Cannot Be Used.*metadata node 1, not 2`),
			},
			{
				// Another path would be a new store: beegfs-setup-meta rewrites storeMetaDirectory,
				// so beegfs-meta would come up empty. Refused at plan while the config names the
				// initialised one.
				Config:      strings.Replace(metaConfig(l, "login01"), `mgmtd_host = "login01"`, "mgmtd_host = \"login01\"\n  path = \""+otherMetaPath+"\"", 1),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Metadata Store Would Be Switched.*names\s+` + labMetaPath + `,\s+an\s+initialised\s+metadata\s+store`),
			},
			{
				PreConfig: func() {
					if got := onHost(t, l, "login01", "systemctl is-active "+beegfs.ServiceMeta+"; test -e "+otherMetaPath+" && echo created; "+
						"sed -n 's/^storeMetaDirectory *= *//p' "+beegfs.MetaConfPath); got != "active\n"+labMetaPath {
						t.Fatalf("after the refused plans, beegfs-meta, %s and storeMetaDirectory: %q", otherMetaPath, got)
					}
				},
				Config: metaConfig(l, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMetaOnHost(l, uuid, "login01"), checkNodeNumIDUnchanged(l, &ids)),
			},
		},
	})
}

// TestAccBeegfsMetadata_refusals: a path on the root filesystem and a directory initialised
// as another node are refused at plan, and the host is left as it was.
func TestAccBeegfsMetadata_refusals(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, "login01", "beegfs-meta")
	const foreign = "/beegfs/gpucluster-test-meta-other"
	onHost(t, l, "login01", "mkdir -p "+foreign+" && echo 7 > "+foreign+"/nodeNumID")
	t.Cleanup(func() { onHost(t, l, "login01", "rm -rf "+foreign) })
	for name, tc := range map[string]struct{ path, want string }{
		"root filesystem":   {"/var/lib/gpucluster-test-meta", `(?s)Not On A Filesystem Of Its Own.*root filesystem`},
		"another node's ID": {foreign, `(?s)Metadata Directory Cannot Be Used.*metadata node 7, not 1`},
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_metadata" "test" {
  node       = "login01"
  path       = %q
  mgmtd_host = "10.0.0.10"
}
`, tc.path),
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	if out := onHost(t, l, "login01", "test -e /var/lib/gpucluster-test-meta && echo created; cat "+foreign+"/nodeNumID"); out != "7" {
		t.Errorf("refused plans changed login01: %q", out)
	}
}

// checkMetaOnHost reads the interlock, the ID file, the drop-in and the service on login01.
func checkMetaOnHost(l *lab.Lab, uuid, mgmtd string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "cat "+labMetaPath+"/nodeNumID; "+
			"grep -E '^(storeAllowFirstRunInit|storeFsUUID|storeMetaDirectory|sysMgmtdHost) ' "+beegfs.MetaConfPath+" | sed 's/ *= */=/' | sort; "+
			"cat "+beegfs.MetaDropInPath+"; systemctl is-active "+beegfs.ServiceMeta+"; systemctl is-enabled "+beegfs.ServiceMeta)
		if err != nil {
			return err
		}
		want := strings.Join([]string{"1", "storeAllowFirstRunInit=false", "storeFsUUID=" + uuid, "storeMetaDirectory=" + labMetaPath,
			"sysMgmtdHost=" + mgmtd, "[Unit]", "RequiresMountsFor=/beegfs", "active", "enabled"}, "\n")
		if got != want {
			return fmt.Errorf("login01:\n%s\nwant:\n%s", got, want)
		}
		return nil
	}
}

// checkNodeNumIDUnchanged proves beegfs-setup-meta did not run again.
func checkNodeNumIDUnchanged(l *lab.Lab, before *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "stat -c '%i %Y' "+labMetaPath+"/nodeNumID")
		if err != nil {
			return err
		}
		if *before == "" || got != *before {
			return fmt.Errorf("%s/nodeNumID is now %q (inode mtime), was %q: the directory was set up again", labMetaPath, got, *before)
		}
		return nil
	}
}

// checkMetaDestroyed: beegfs-meta stopped and disabled, drop-in gone, metadata still there.
func checkMetaDestroyed(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "systemctl is-active "+beegfs.ServiceMeta+"; systemctl is-enabled "+beegfs.ServiceMeta+"; "+
			"test -e "+beegfs.MetaDropInPath+" && echo drop-in; cat "+labMetaPath+"/nodeNumID; true")
		if err != nil {
			return err
		}
		if want := "inactive\ndisabled\n1"; got != want {
			return fmt.Errorf("login01 after destroy: %q, want %q (stopped, disabled, no drop-in, nodeNumID kept)", got, want)
		}
		return nil
	}
}

// TestAccBeegfsMetadata_filesystemMissing is the guide's array that did not assemble, on the
// controller: login01 boots without its /beegfs. The plan then fails naming the missing
// filesystem for management and metadata alike, both stay in state with the filesystem they
// were set up on, and nothing is initialised on the root filesystem. Once /beegfs is back and
// login01 rebooted, both services run again and there is nothing to apply.
func TestAccBeegfsMetadata_filesystemMissing(t *testing.T) {
	l := lab.Require(t)
	const node = lab.LoginHost
	installBeegfs(t, l, node, "beegfs-mgmtd", "beegfs-meta")
	keepDiskAttached(t, l, node)
	uuid := diskUUID(t, l, node)
	config := metaConfig(l, "10.0.0.10")
	// Without depends_on, Terraform plans both, so the plan reports both refusals.
	independent := strings.Replace(config, "depends_on = [gpucluster_beegfs_management.test]", "", 1)
	bothMissing := regexp.MustCompile(`(?s)(Management Filesystem Missing.*Metadata Filesystem Missing|Metadata Filesystem Missing.*Management Filesystem Missing)`)
	var db, ids string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeAggregateTestCheckFunc(checkMetaDestroyed(l), checkMgmtdDestroyed(l)),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("fs_uuid"), knownvalue.StringExact(uuid)),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("mountpoint"), knownvalue.StringExact("/beegfs")),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("fs_uuid"), knownvalue.StringExact(uuid)),
				},
				Check: func(*terraform.State) error {
					var err error
					if db, err = onHostErr(l, node, "stat -c '%i %Y' "+labDBFile); err == nil {
						ids, err = onHostErr(l, node, "stat -c '%i %Y' "+labMetaPath+"/nodeNumID")
					}
					return err
				},
			},
			{
				PreConfig: func() {
					rebootWithDisk(t, l, node, false)
					assertNothingOnRootFilesystem(t, l)
				},
				Config:      independent,
				PlanOnly:    true,
				ExpectError: bothMissing,
			},
			{
				// A refresh keeps both resources and the filesystem they were set up on; the
				// plan after it fails the same way.
				RefreshState: true,
				ExpectError:  bothMissing,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(mgmtdAddr, "fs_uuid", uuid),
					resource.TestCheckResourceAttr(mgmtdAddr, "mountpoint", "/beegfs"),
					resource.TestMatchResourceAttr(mgmtdAddr, "status", regexp.MustCompile(`^filesystem missing: /beegfs/mgmtd is on /`)),
					resource.TestCheckResourceAttr(metaAddr, "fs_uuid", uuid),
					resource.TestCheckResourceAttr(metaAddr, "mountpoint", "/beegfs"),
					resource.TestMatchResourceAttr(metaAddr, "status", regexp.MustCompile(`^filesystem missing: `+labMetaPath+` is on /`)),
					func(*terraform.State) error { assertNothingOnRootFilesystem(t, l); return nil },
				),
			},
			{
				PreConfig: func() {
					rebootWithDisk(t, l, node, true)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMgmtdOnController(l),
					checkMetaOnHost(l, uuid, "10.0.0.10"),
					checkDBUnchanged(l, &db),
					checkNodeNumIDUnchanged(l, &ids),
				),
			},
		},
	})
}

// assertNothingOnRootFilesystem looks at login01 booted without its /beegfs: the mount failed,
// systemd started neither service, and the empty mountpoint on the root filesystem got no
// database and no metadata.
func assertNothingOnRootFilesystem(t *testing.T, l *lab.Lab) {
	t.Helper()
	checks := []struct{ what, script, want string }{
		{"/beegfs is not mounted", "findmnt -n /beegfs >/dev/null && echo mounted || echo missing", "missing"},
		{"the services are down", "systemctl is-active " + beegfs.ServiceMgmtd + " " + beegfs.ServiceMeta + " || true", "inactive\ninactive"},
		{"nothing was initialised on the root filesystem", "ls -A /beegfs", ""},
	}
	for _, c := range checks {
		if got := onHost(t, l, lab.LoginHost, c.script); got != c.want {
			t.Fatalf("login01 with /beegfs missing: %s: got %q, want %q", c.what, got, c.want)
		}
	}
}
