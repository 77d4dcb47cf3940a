package provider

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

func TestParseNodePathID(t *testing.T) {
	tests := map[string]struct{ node, dir string }{
		"gpu02:/data/beegfs-storage":    {"gpu02", "/data/beegfs-storage"},
		"10.0.0.12:/data/x":             {"10.0.0.12", "/data/x"},
		"fd00::12:/data/beegfs-storage": {"fd00::12", "/data/beegfs-storage"},
		"gpu02":                         {},
		"gpu02:data":                    {},
		"gpu02:/":                       {},
		"gpu02:/data/a,b":               {},
		":/data/beegfs-storage":         {},
	}
	for id, want := range tests {
		node, dir, err := parseNodePathID(id)
		if want.node == "" {
			if err == nil {
				t.Errorf("%q accepted as %q, %q", id, node, dir)
			}
			continue
		}
		if err != nil || node != want.node || dir != want.dir {
			t.Errorf("%q: %q, %q, %v; want %q, %q", id, node, dir, err, want.node, want.dir)
		}
	}
}

// The IDs of the targets a run declares: a target ID twice, or one storage node ID on two hosts,
// is refused naming the attribute; a target planned again (the create half of a replacement,
// with the new IDs) takes its own place.
func TestTargetDeclarations(t *testing.T) {
	target := func(host, dir string, node, id int64) beegfs.TargetIdentity {
		return beegfs.TargetIdentity{Host: host, Directory: dir, NodeNumID: node, TargetID: id}
	}
	const data, data2 = "/data/beegfs-storage", "/data2/beegfs-storage"
	steps := []struct {
		t    beegfs.TargetIdentity
		attr string // "" when accepted
	}{
		{target("gpu01", data, 1, 101), ""},
		{target("gpu02", data, 2, 201), ""},
		{target("gpu02", data, 2, 202), ""},
		{target("gpu03", data, 3, 101), "target_id"},
		{target("gpu03", data, 1, 301), "node_num_id"},
		{target("gpu02", data2, 2, 201), ""},
		{target("gpu02", "/data3/beegfs-storage", 5, 203), "node_num_id"},
	}
	var d targetDeclarations
	for i, s := range steps {
		attr, err := d.declare(s.t)
		if (err == nil) != (s.attr == "") || attr != s.attr {
			t.Errorf("step %d %+v: attribute %q, %v; want %q", i, s.t, attr, err, s.attr)
		}
	}
}

// Two targets with one target_id in one configuration are refused at plan, before any node is
// asked: the provider's connection settings are not known yet.
func TestBeegfsTargetDuplicateIDsRefusedAtPlan(t *testing.T) {
	config := func(second string) string {
		return `
resource "terraform_data" "user" {
  input = "admin"
}

provider "gpucluster" {
  user = terraform_data.user.output
}

resource "gpucluster_beegfs_target" "one" {
  node        = "gpu01"
  node_num_id = 1
  mgmtd_host  = "10.0.0.10"
}

resource "gpucluster_beegfs_target" "two" {
  mgmtd_host  = "10.0.0.10"
` + second + `
}
`
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config("node = \"gpu02\"\n  node_num_id = 2\n  target_id = 101"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Storage Target ID Already Used.*target_id 101 is already declared for\s+gpu0[12]:/data/beegfs-storage`),
			},
			{
				Config:      config("node = \"gpu02\"\n  node_num_id = 1\n  target_id = 102"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Storage Target ID Already Used.*node_num_id 1 is already declared for`),
			},
			{
				// Another resource's plan is not what the host runs: it may run another node.
				Config:      config("node = \"gpu01\"\n  node_num_id = 2\n  path = \"/data/b\""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)another target in the\s+configuration,\s+gpu01:/data/\S+,\s+declares\s+storage\s+node\s+[12]\s+on\s+gpu01.*this\s+target's\s+is\s+[12]`),
			},
			{
				// One directory declared twice: the ownership check, which runs first, refuses it.
				Config:      config("node = \"gpu01\"\n  node_num_id = 1"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Object Declared Twice.*beegfs\s+target\s+/data/beegfs-storage\s+on\s+node\s+gpu01`),
			},
			{
				Config:      config("node = \"gpu02\"\n  node_num_id = 2\n  path = \"/data/a,b\""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Storage Path.*comma`),
			},
		},
	})
}

const targetResource = "gpucluster_beegfs_target.test"

func targetConfig(l *lab.Lab, node string, nodeNumID int, extra string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_target" "test" {
  node        = %q
  node_num_id = %d
  mgmtd_host  = %q
%s
}
`, node, nodeNumID, l.Host("login01").Address, extra)
}

// prepareStorageHost installs beegfs-storage and gives the node a conn.auth of its own, which
// gpucluster_beegfs_management distributes in a real configuration. Cleanup puts back the
// shipped config and removes what the test set up, data included.
func prepareStorageHost(t *testing.T, l *lab.Lab, node string) {
	t.Helper()
	installBeegfs(t, l, node, "beegfs-storage")
	onHost(t, l, node, `set -e
cp -a /etc/beegfs/beegfs-storage.conf /root/beegfs-storage.conf.tacc
if [ ! -e /etc/beegfs/conn.auth ]; then head -c 128 /dev/urandom > /etc/beegfs/conn.auth; chmod 400 /etc/beegfs/conn.auth; fi
findmnt -n /data >/dev/null`)
	t.Cleanup(func() {
		onHost(t, l, node, `systemctl start data.mount
systemctl disable --now beegfs-storage 2>/dev/null
rm -rf /data/beegfs-storage /data/other-target /etc/systemd/system/beegfs-storage.service.d
systemctl daemon-reload
cp /root/beegfs-storage.conf.tacc /etc/beegfs/beegfs-storage.conf`)
	})
}

func diskUUID(t *testing.T, l *lab.Lab, node string) string {
	t.Helper()
	d, err := l.Disk(node)
	if err != nil {
		t.Fatal(err)
	}
	return d.UUID
}

// storageLab is the lab with node prepared for a storage target (prepareStorageHost) and a
// management service its daemon registers with (labMgmtd), and the UUID of the node's disk.
func storageLab(t *testing.T, node string) (*lab.Lab, string) {
	t.Helper()
	l := lab.Require(t)
	prepareStorageHost(t, l, node)
	labMgmtd(t, l, node)
	return l, diskUUID(t, l, node)
}

// checkTargetOnHost proves the target as the guide sets it up: ID files, the interlock with
// the leading empty element, the drop-in and the running service.
func checkTargetOnHost(l *lab.Lab, node, nodeID, targetID, uuid, mgmtd string) resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(
		checkOnHost(l, node, "cat /data/beegfs-storage/nodeNumID /data/beegfs-storage/targetNumID", nodeID+"\n"+targetID),
		checkOnHost(l, node, `sed -n 's/^\(sysMgmtdHost\|storeStorageDirectory\|storeAllowFirstRunInit\|storeFsUUID\) *= */\1=/p' /etc/beegfs/beegfs-storage.conf`,
			"sysMgmtdHost="+mgmtd+"\nstoreStorageDirectory=,/data/beegfs-storage\nstoreAllowFirstRunInit=false\nstoreFsUUID=,"+uuid),
		checkOnHost(l, node, "cat /etc/systemd/system/beegfs-storage.service.d/target-"+targetID+".conf", "[Unit]\nRequiresMountsFor=/data"),
		checkOnHost(l, node, "systemctl is-active beegfs-storage; systemctl is-enabled beegfs-storage", "active\nenabled"),
		checkOnHost(l, node, "findmnt -n -o TARGET --target /data/beegfs-storage", "/data"),
	)
}

func TestAccBeegfsTarget_lifecycle(t *testing.T) {
	const node = "gpu01"
	l, uuid := storageLab(t, node)
	login := l.Host("login01").Address
	sameUUID := statecheck.CompareValue(compare.ValuesSame())
	// After the in-place update the configuration names the management host by name.
	byName := strings.Replace(targetConfig(l, node, 1, ""), fmt.Sprintf("mgmtd_host  = %q", login), `mgmtd_host  = "login01"`, 1)
	step := func(drift string) resource.TestStep {
		return resource.TestStep{
			PreConfig: func() { onHost(t, l, node, drift) },
			Config:    byName,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(targetResource, plancheck.ResourceActionUpdate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: checkTargetOnHost(l, node, "1", "101", uuid, "login01"),
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkOnHost(l, node, "systemctl is-enabled beegfs-storage; systemctl is-active beegfs-storage || true", "disabled\ninactive"),
			checkOnHost(l, node, "cat /data/beegfs-storage/targetNumID /data/beegfs-storage/tacc-chunk", "101\nuser data"),
			checkOnHost(l, node, "test -e /etc/systemd/system/beegfs-storage.service.d/target-101.conf && echo left || echo removed", "removed"),
			// The last target leaves the lists too: starting the service by hand never serves it again.
			checkOnHost(l, node, storageListsScript, "storeStorageDirectory=\nstoreFsUUID="),
		),
		Steps: []resource.TestStep{
			{
				Config: targetConfig(l, node, 1, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("id"), knownvalue.StringExact("gpu01:/data/beegfs-storage")),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("target_id"), knownvalue.Int64Exact(101)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("fs_uuid"), knownvalue.StringExact(uuid)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("mountpoint"), knownvalue.StringExact("/data")),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("force_destroy_data"), knownvalue.Bool(false)),
					sameUUID.AddStateValue(targetResource, tfjsonpath.New("fs_uuid")),
				},
				Check: checkTargetOnHost(l, node, "1", "101", uuid, login),
			},
			{
				// In place: the management host changes in the config, the target is not set up again.
				PreConfig: func() { onHost(t, l, node, "echo 'user data' > /data/beegfs-storage/tacc-chunk") },
				Config:    byName,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(targetResource, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("mgmtd_host"), knownvalue.StringExact("login01")),
					sameUUID.AddStateValue(targetResource, tfjsonpath.New("fs_uuid")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTargetOnHost(l, node, "1", "101", uuid, "login01"),
					checkOnHost(l, node, "cat /data/beegfs-storage/tacc-chunk", "user data"),
				),
			},
			{
				ResourceName:      targetResource,
				ImportState:       true,
				ImportStateIdFunc: idInState(targetResource),
				ImportStateVerify: true,
			},
			step(`sed -i 's/^storeAllowFirstRunInit.*/storeAllowFirstRunInit = true/' /etc/beegfs/beegfs-storage.conf`),
			step(`rm /etc/systemd/system/beegfs-storage.service.d/target-101.conf && systemctl daemon-reload`),
			step(`systemctl stop beegfs-storage`),
			{
				// The array that did not assemble: /data is an empty directory on the root
				// filesystem. The plan stops with the guide's advice and nothing is set up there.
				PreConfig: func() { onHost(t, l, node, "systemctl stop data.mount && ! findmnt -n /data") },
				Config:    byName,
				ExpectError: regexp.MustCompile(`(?s)Storage Filesystem Missing.*` + regexp.QuoteMeta(uuid) +
					`.*` + wrapped("is not the filesystem named in storeFsUUID") + `.*` + wrapped("Do not set storeAllowFirstRunInit = true")),
			},
			{
				PreConfig: func() {
					if out := onHost(t, l, node, "ls -A /data; systemctl is-active beegfs-storage || true"); out != "inactive" && out != "failed" {
						t.Fatalf("with /data unmounted: %q, want an empty /data and beegfs-storage not running", out)
					}
					onHost(t, l, node, "systemctl start data.mount")
				},
				Config: byName,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(targetResource, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTargetOnHost(l, node, "1", "101", uuid, "login01"),
					checkOnHost(l, node, "cat /data/beegfs-storage/tacc-chunk", "user data"),
				),
			},
		},
	})
}

// The plan refuses, on the node's own evidence, what would set a target up wrongly; nothing is
// created on the node.
func TestAccBeegfsTarget_planRefusals(t *testing.T) {
	const node = "gpu02"
	l, uuid := storageLab(t, node)
	const otherUUID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	plan := func(pre, config, want string) resource.TestStep {
		return resource.TestStep{
			PreConfig: func() {
				onHost(t, l, node, "cp /root/beegfs-storage.conf.tacc /etc/beegfs/beegfs-storage.conf; rm -rf /data/beegfs-storage /data/other-target\n"+pre)
			},
			Config:      config,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	setConf := func(dirs, uuids string) string {
		return fmt.Sprintf("sed -i 's|^storeStorageDirectory.*|storeStorageDirectory = %s|; s|^storeFsUUID.*|storeFsUUID = %s|' /etc/beegfs/beegfs-storage.conf", dirs, uuids)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			plan("", targetConfig(l, node, 2, `path = "/var/beegfs-storage"`),
				`(?s)Storage Path Not On Its Own Filesystem.*/var/beegfs-storage is on the root filesystem`),
			plan(setConf(",/data/beegfs-storage", ","+otherUUID), targetConfig(l, node, 2, ""),
				`(?s)Storage Interlock Does Not Match.*`+otherUUID+`.*`+uuid),
			plan("mkdir /data/beegfs-storage && echo 7 > /data/beegfs-storage/nodeNumID && echo 701 > /data/beegfs-storage/targetNumID",
				targetConfig(l, node, 2, ""),
				`(?s)Storage Target IDs Differ.*nodeNumID holds 7, but node_num_id is 2.*targetNumID holds 701, but target_id is 201`),
			plan("mkdir /data/beegfs-storage && echo lost > /data/beegfs-storage/file", targetConfig(l, node, 2, ""),
				`(?s)Storage Directory Not Empty`),
			plan(setConf(",/data/other-target", ","+uuid)+"\nmkdir /data/other-target && echo 2 > /data/other-target/nodeNumID && echo 201 > /data/other-target/targetNumID",
				targetConfig(l, node, 2, ""),
				`(?s)Storage Target ID Already Used.*target_id 201 is already used by gpu02:/data/other-target`),
			plan(setConf(",/data/other-target", ","+uuid)+"\nmkdir /data/other-target && echo 3 > /data/other-target/nodeNumID && echo 301 > /data/other-target/targetNumID",
				targetConfig(l, node, 2, ""),
				`(?s)Storage Target ID Already Used.*already runs storage node 3`),
			{
				PreConfig: func() {
					if out := onHost(t, l, node, "ls -d /var/beegfs-storage /data/beegfs-storage 2>/dev/null; systemctl is-enabled beegfs-storage || true"); out != "disabled" {
						t.Fatalf("the refused plans left %q on %s", out, node)
					}
					onHost(t, l, node, "cp /root/beegfs-storage.conf.tacc /etc/beegfs/beegfs-storage.conf; rm -rf /data/other-target")
				},
				Config:             targetConfig(l, node, 2, ""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// A target an admin set up by hand is adopted without running the setup again; with
// force_destroy_data the destroy deletes it and takes it out of the config lists.
func TestAccBeegfsTarget_adoptAndForceDestroy(t *testing.T) {
	const node = "gpu02"
	l, uuid := storageLab(t, node)
	login := l.Host("login01").Address
	onHost(t, l, node, fmt.Sprintf("/opt/beegfs/sbin/beegfs-setup-storage -p /data/beegfs-storage -s 2 -i 201 -m %s >/dev/null && echo 'user data' > /data/beegfs-storage/tacc-chunk", login))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkOnHost(l, node, "test -e /data/beegfs-storage && echo left || echo wiped", "wiped"),
			checkOnHost(l, node, `sed -n 's/^\(storeStorageDirectory\|storeFsUUID\) *=/\1=/p' /etc/beegfs/beegfs-storage.conf`, "storeStorageDirectory=\nstoreFsUUID="),
			checkOnHost(l, node, "systemctl is-enabled beegfs-storage; findmnt -n -o TARGET /data", "disabled\n/data"),
		),
		Steps: []resource.TestStep{
			{
				Config: targetConfig(l, node, 2, "force_destroy_data = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("target_id"), knownvalue.Int64Exact(201)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("force_destroy_data"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("fs_uuid"), knownvalue.StringExact(uuid)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTargetOnHost(l, node, "2", "201", uuid, login),
					checkOnHost(l, node, "cat /data/beegfs-storage/tacc-chunk", "user data"),
				),
			},
		},
	})
}

const storageListsScript = `sed -n 's/^\(storeStorageDirectory\|storeFsUUID\) *= */\1=/p' /etc/beegfs/beegfs-storage.conf`

func twoTargetsConfig(l *lab.Lab, second string, secondID int) string {
	config := providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_target" "a" {
  node        = "gpu01"
  node_num_id = 1
  mgmtd_host  = %q
}
`, l.Host("login01").Address)
	if second != "" {
		config += fmt.Sprintf(`
resource "gpucluster_beegfs_target" "b" {
  node        = "gpu01"
  node_num_id = 1
  target_id   = %d
  path        = %q
  mgmtd_host  = %q
  depends_on  = [gpucluster_beegfs_target.a]
}
`, secondID, second, l.Host("login01").Address)
	}
	return config
}

// Destroying one of a host's two targets takes only that one out of the config and restarts
// beegfs-storage for the other; declared again, the untouched directory is adopted, and a
// replacement plans without being taken for a second resource.
func TestAccBeegfsTarget_twoTargetsOneHost(t *testing.T) {
	const node = "gpu01"
	l, uuid := storageLab(t, node)
	t.Cleanup(func() { onHost(t, l, node, "rm -rf /data/other-target-2") })
	const a, b = "gpucluster_beegfs_target.a", "gpucluster_beegfs_target.b"
	dropIns := "ls /etc/systemd/system/beegfs-storage.service.d/"
	both := func(second, secondID string) resource.TestCheckFunc {
		return resource.ComposeAggregateTestCheckFunc(
			// beegfs-setup-storage appends " ,DIR": the lists as the daemon reads them, blanks aside.
			checkOnHost(l, node, storageListsScript+" | tr -d ' '", "storeStorageDirectory=,/data/beegfs-storage,"+second+"\nstoreFsUUID=,"+uuid+","+uuid),
			checkOnHost(l, node, "cat /data/beegfs-storage/targetNumID "+second+"/targetNumID", "101\n"+secondID),
			checkOnHost(l, node, dropIns, "target-101.conf\ntarget-"+secondID+".conf"),
			checkOnHost(l, node, "systemctl is-active beegfs-storage; systemctl is-enabled beegfs-storage", "active\nenabled"),
		)
	}
	var pid string
	mainPID := "systemctl show -p MainPID --value beegfs-storage"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkOnHost(l, node, "systemctl is-enabled beegfs-storage; systemctl is-active beegfs-storage || true", "disabled\ninactive"),
			checkOnHost(l, node, storageListsScript, "storeStorageDirectory=\nstoreFsUUID="),
			checkOnHost(l, node, "cat /data/beegfs-storage/targetNumID /data/other-target/targetNumID /data/other-target-2/targetNumID", "101\n102\n103"),
		),
		Steps: []resource.TestStep{
			{
				Config: twoTargetsConfig(l, "/data/other-target", 102),
				Check:  both("/data/other-target", "102"),
			},
			{
				PreConfig: func() {
					pid = onHost(t, l, node, mainPID+"; echo chunk > /data/other-target/tacc-chunk")
				},
				Config: twoTargetsConfig(l, "", 0),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(b, plancheck.ResourceActionDestroy),
						plancheck.ExpectResourceAction(a, plancheck.ResourceActionNoop),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, node, "systemctl is-active beegfs-storage; systemctl is-enabled beegfs-storage", "active\nenabled"),
					checkOnHost(l, node, storageListsScript, "storeStorageDirectory=,/data/beegfs-storage\nstoreFsUUID=,"+uuid),
					checkOnHost(l, node, dropIns, "target-101.conf"),
					checkOnHost(l, node, "cat /data/other-target/targetNumID /data/other-target/tacc-chunk", "102\nchunk"),
					func(*terraform.State) error {
						now, err := onHostErr(l, node, mainPID)
						if err == nil && (now == pid || now == "0") {
							err = fmt.Errorf("beegfs-storage main PID %s before and %s after: not restarted for the remaining target", pid, now)
						}
						return err
					},
				),
			},
			{
				Config: twoTargetsConfig(l, "/data/other-target", 102),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(b, plancheck.ResourceActionCreate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					both("/data/other-target", "102"),
					checkOnHost(l, node, "cat /data/other-target/tacc-chunk", "chunk"),
				),
			},
			{
				// A new path needs a new target ID: the old directory keeps 102 on disk.
				Config: twoTargetsConfig(l, "/data/other-target-2", 103),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(b, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: both("/data/other-target-2", "103"),
			},
		},
	})
}

// force_destroy_data deletes only what is provably the target: a directory that lost its ID
// files but holds data refuses the destroy before anything changes. The destroy runs without a
// refresh, as terraform destroy -refresh=false does, since a refresh drops such a target.
func TestAccBeegfsTarget_forceDestroyRefusesUnprovenDirectory(t *testing.T) {
	const node = "gpu02"
	l, uuid := storageLab(t, node)
	config := targetConfig(l, node, 2, "force_destroy_data = true")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		AdditionalCLIOptions:     &resource.AdditionalCLIOptions{Plan: resource.PlanOptions{NoRefresh: true}},
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkOnHost(l, node, "test -e /data/beegfs-storage && echo left || echo wiped", "wiped"),
			checkOnHost(l, node, storageListsScript, "storeStorageDirectory=\nstoreFsUUID="),
		),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					onHost(t, l, node, "cd /data/beegfs-storage && rm nodeNumID targetNumID && echo 'user data' > tacc-chunk")
				},
				Config:      config,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Storage Directory Not This Target.*` + wrapped("holds files but no nodeNumID or targetNumID")),
			},
			{
				PreConfig: func() {
					got := onHost(t, l, node, "cat /data/beegfs-storage/tacc-chunk; "+storageListsScript+"; systemctl is-active beegfs-storage; ls /etc/systemd/system/beegfs-storage.service.d/")
					if want := "user data\nstoreStorageDirectory=,/data/beegfs-storage\nstoreFsUUID=," + uuid + "\nactive\ntarget-201.conf"; got != want {
						t.Fatalf("the refused destroy changed %s:\n%s\nwant\n%s", node, got, want)
					}
					onHost(t, l, node, "echo 2 > /data/beegfs-storage/nodeNumID && echo 201 > /data/beegfs-storage/targetNumID")
				},
				Config: config,
			},
		},
	})
}

// TestAccBeegfsTarget_idFilesLost: a target whose ID files were deleted by hand while its data
// stayed is kept in state (not dropped as gone, which would plan a new target), the plan refuses
// and says which files to put back, and once they are back there is nothing to do.
func TestAccBeegfsTarget_idFilesLost(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	prepareStorageHost(t, l, node)
	labMgmtd(t, l, node)
	config := targetConfig(l, node, 2, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkOnHost(l, node, "cat /data/beegfs-storage/targetNumID /data/beegfs-storage/tacc-chunk", "201\nuser data"),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					onHost(t, l, node, "cd /data/beegfs-storage && echo 'user data' > tacc-chunk && rm nodeNumID targetNumID")
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Storage Target ID Files Missing.*node 2, target 201`),
			},
			{
				PreConfig: func() {
					onHost(t, l, node, "echo 2 > /data/beegfs-storage/nodeNumID && echo 201 > /data/beegfs-storage/targetNumID")
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
				},
			},
		},
	})
}

// directLabCluster connects to the lab as the provider configured from providerConfig does.
func directLabCluster(t *testing.T, l *lab.Lab) *cluster {
	t.Helper()
	key, err := os.ReadFile(l.AdminKeyPath)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []nodeOverride
	for _, h := range l.Hosts {
		nodes = append(nodes, nodeOverride{name: h.Name, address: h.Address})
	}
	c := newCluster(settings{
		user: l.AdminUser, port: 22, privateKey: key, knownHostsFile: l.KnownHostsPath,
		loginNode: "login01", jumpHost: "login01", connectTimeout: 30 * time.Second, keepalive: 15 * time.Second,
		sudoExe: "sudo", sudoPassword: []byte(l.AdminPassword), overrides: nodes,
	})
	t.Cleanup(c.pool.Close)
	return c
}

// Terraform plans again during the apply, with every value known, so the plan-time check
// normally catches a target ID another target of the host holds. The apply checks again under
// the host's lock, for what changed after that last plan: called directly, converge refuses and
// sets nothing up.
func TestAccBeegfsTarget_convergeChecksHostIDs(t *testing.T) {
	const node = "gpu02"
	l, uuid := storageLab(t, node)
	onHost(t, l, node, "sed -i 's|^storeStorageDirectory.*|storeStorageDirectory = ,/data/other-target|; s|^storeFsUUID.*|storeFsUUID = ,"+uuid+"|' /etc/beegfs/beegfs-storage.conf"+
		" && mkdir /data/other-target && echo 2 > /data/other-target/nodeNumID && echo 201 > /data/other-target/targetNumID")
	r := &beegfsTargetResource{cluster: directLabCluster(t, l)}
	m := beegfsTargetModel{
		Node: types.StringValue(node), Path: types.StringValue(defaultStoragePath),
		NodeNumID: types.Int64Value(2), TargetID: types.Int64Value(201), MgmtdHost: types.StringValue(l.Host("login01").Address),
		ForceDestroyData: types.BoolValue(false), FsUUID: types.StringUnknown(), Mountpoint: types.StringUnknown(),
	}
	diags := r.converge(context.Background(), &m, true)
	if !diags.HasError() || !strings.Contains(fmt.Sprint(diags), "target_id 201 is already used by gpu02:/data/other-target") {
		t.Fatalf("converge: %v; want the host's other target refusing target_id 201", diags)
	}
	got := onHost(t, l, node, "ls -d /data/beegfs-storage 2>/dev/null; "+storageListsScript+"; systemctl is-enabled beegfs-storage || true")
	if want := "storeStorageDirectory=,/data/other-target\nstoreFsUUID=," + uuid + "\ndisabled"; got != want {
		t.Fatalf("the refused converge changed %s:\n%s\nwant\n%s", node, got, want)
	}
}

// wrapped matches a sentence however Terraform wraps the diagnostic's lines.
func wrapped(sentence string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(sentence), " ", `\s+`)
}

// A target that holds file chunks is not deregistered by a removal from the configuration:
// the plan refuses it and nothing changes. With allow_deregister_with_data set and applied,
// the removal deregisters it and the chunks stay on the disk.
func TestAccBeegfsTarget_destroyRefusedWithChunks(t *testing.T) {
	const node = "gpu01"
	l, uuid := storageLab(t, node)
	const chunk = "/data/beegfs-storage/chunks/u0/1A2B/chunk-1"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkOnHost(l, node, "cat "+chunk, "user data"),
			checkOnHost(l, node, storageListsScript, "storeStorageDirectory=\nstoreFsUUID="),
		),
		Steps: []resource.TestStep{
			{
				Config: targetConfig(l, node, 1, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("allow_deregister_with_data"), knownvalue.Bool(false)),
				},
			},
			{
				PreConfig:   func() { onHost(t, l, node, "mkdir -p "+path.Dir(chunk)+" && echo 'user data' > "+chunk) },
				Config:      providerConfig(l, ""),
				ExpectError: regexp.MustCompile(`(?s)Storage Target Holds Data.*` + wrapped("takes target 101 out of") + `.*` + wrapped("still holds file chunks") + `.*` + wrapped("allow_deregister_with_data = true")),
			},
			{
				// Nothing changed: the target is still served, with its data.
				Config: targetConfig(l, node, 1, "allow_deregister_with_data = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(targetResource, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("allow_deregister_with_data"), knownvalue.Bool(true)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, node, storageListsScript, "storeStorageDirectory=,/data/beegfs-storage\nstoreFsUUID=,"+uuid),
					checkOnHost(l, node, "cat "+chunk, "user data"),
				),
			},
		},
	})
}
