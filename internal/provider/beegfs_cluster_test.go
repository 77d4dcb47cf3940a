package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// beegfsCluster is the guide's BeeGFS on the lab: management and metadata on login01, a
// target on each of storage (node N gets target N01 by default) and, when clients is set,
// the client on login01 (migrating admin's home) and on the other listed nodes; version, when
// set, pins every role's package.
type beegfsCluster struct {
	storage []string
	clients []string
	extra   string
	version string
}

func (c beegfsCluster) config(l *lab.Lab) string {
	var b strings.Builder
	b.WriteString(providerConfig(l, ""))
	pin := ""
	if c.version != "" {
		pin = fmt.Sprintf("  beegfs_version = %q\n", c.version)
	}
	fmt.Fprintf(&b, `
resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = %q
  auth_nodes = %s
%[4]s}

resource "gpucluster_beegfs_metadata" "cluster" {
  node        = "login01"
  node_num_id = 1
  mgmtd_host  = %[3]q
  depends_on  = [gpucluster_beegfs_management.cluster]
%[4]s}
`, labDBFile, hclList(c.storage), l.Host(lab.LoginHost).Address, pin)
	for _, node := range c.storage {
		fmt.Fprintf(&b, `
resource "gpucluster_beegfs_target" %[1]q {
  node        = %[1]q
  node_num_id = %[2]d
  mgmtd_host  = %[3]q
  depends_on  = [gpucluster_beegfs_management.cluster, gpucluster_beegfs_metadata.cluster]
%[4]s}
`, node, gpuNumber(node), l.Host(lab.LoginHost).Address, pin)
	}
	for _, node := range c.clients {
		migrate, after := node == lab.LoginHost, "gpucluster_beegfs_client.login01"
		if migrate {
			after = "gpucluster_beegfs_target." + c.storage[0]
		}
		fmt.Fprintf(&b, `
resource "gpucluster_beegfs_client" %[1]q {
  node               = %[1]q
  mgmtd_host         = %[2]q
  migrate_local_home = %[3]t
  expected_fstype    = %[4]q
  depends_on         = [%[5]s]
%[6]s}
`, node, l.Host(lab.LoginHost).Address, migrate, labClientFSType, after, pin)
	}
	return b.String() + c.extra
}

// rebootWithDisk reboots node with its lab disk detached (attached=false: the guide's array
// that did not assemble) or attached again.
func rebootWithDisk(t *testing.T, l *lab.Lab, node string, attached bool) {
	t.Helper()
	ctx := labContextFor(t, 3*time.Minute)
	change := l.DetachDisk
	if attached {
		change = l.AttachDisk
	}
	if err := change(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := l.Reboot(ctx, node); err != nil {
		t.Fatal(err)
	}
}

// keepDiskAttached brings node's disk back after the test, so that a failed run does not
// leave the host without its filesystem for the tests after it.
func keepDiskAttached(t *testing.T, l *lab.Lab, node string) {
	t.Helper()
	disk, err := l.Disk(node)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if onHost(t, l, node, "findmnt -n "+disk.Mountpoint+" >/dev/null && echo mounted || echo missing") != "missing" {
			return
		}
		ctx := labContextFor(t, 3*time.Minute)
		_ = l.AttachDisk(ctx, node)
		if err := l.Reboot(ctx, node); err != nil {
			t.Errorf("bring %s's %s back: %v", node, disk.Mountpoint, err)
		}
	})
}

// gpuNumber is the guide's node number of a GPU server: gpu04 is node 4.
func gpuNumber(node string) int {
	var n int
	if _, err := fmt.Sscanf(node, "gpu%d", &n); err != nil {
		panic(fmt.Sprintf("%s is not named gpuNN", node))
	}
	return n
}

func labContextFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestAccBeegfs_interlockAfterReboot is the guide's failed array: gpu01's /data does not come
// back after a reboot. Then beegfs-storage stays down (systemd's RequiresMountsFor, and the
// daemon's own storeFsUUID check when started by hand), nothing is initialised on the root
// filesystem, and the plan names the problem. Once /data is back and the host reboots again,
// the target is up with the same IDs and its data, and there is nothing to apply.
func TestAccBeegfs_interlockAfterReboot(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu01"
	installBeegfs(t, l, "login01", "beegfs-mgmtd", "beegfs-meta")
	prepareStorageHost(t, l, node)
	keepDiskAttached(t, l, node)
	config := beegfsCluster{storage: []string{node}}.config(l)
	const target = "gpucluster_beegfs_target.gpu01"
	const chunk = "/data/beegfs-storage/chunks-written-before-the-reboot"
	var untouched string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkOnHost(l, node, "systemctl is-enabled beegfs-storage; cat /data/beegfs-storage/targetNumID "+chunk, "disabled\n101\nuser data"),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(target, tfjsonpath.New("target_id"), knownvalue.Int64Exact(101)),
				},
				Check: func(*terraform.State) error {
					_, err := onHostErr(l, node, "echo 'user data' > "+chunk)
					return err
				},
			},
			{
				PreConfig: func() {
					rebootWithDisk(t, l, node, false)
					assertInterlockHolds(t, l, node)
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Storage Filesystem Missing.*gpu01`),
			},
			{
				PreConfig: func() {
					rebootWithDisk(t, l, node, true)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(target, tfjsonpath.New("target_id"), knownvalue.Int64Exact(101)),
					statecheck.ExpectKnownValue(target, tfjsonpath.New("node_num_id"), knownvalue.Int64Exact(1)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTargetOnHost(l, node, "1", "101", diskUUID(t, l, node), l.Host(lab.LoginHost).Address),
					checkOnHost(l, node, "cat "+chunk, "user data"),
				),
			},
			{
				// A no-op run: refresh and apply leave every file and daemon as they were.
				PreConfig: func() { untouched = beegfsFingerprint(t, l, node) },
				Config:    config,
				Check: func(*terraform.State) error {
					if after := beegfsFingerprint(t, l, node); after != untouched {
						return fmt.Errorf("a no-op apply changed the hosts:\nbefore:\n%s\nafter:\n%s", untouched, after)
					}
					return nil
				},
			},
		},
	})
}

// beegfsFingerprint is what a no-op apply must not change: the BeeGFS files' content and
// modification times on login01 and node, and each daemon's invocation (a restart gets a new one).
func beegfsFingerprint(t *testing.T, l *lab.Lab, node string) string {
	t.Helper()
	const script = `find /etc/beegfs /etc/systemd/system -path '*beegfs*' -type f -exec stat -c '%n %Y' {} + | sort
find /etc/beegfs -type f -exec sha256sum {} + | sort
systemctl show -p InvocationID beegfs-mgmtd beegfs-meta beegfs-storage beegfs-client 2>/dev/null`
	return onHost(t, l, lab.LoginHost, script) + "\n" + onHost(t, l, node, script)
}

// assertInterlockHolds looks at gpu01 booted without its /data: the mount failed, systemd
// did not start beegfs-storage, the daemon itself refuses when started by hand, and the
// root filesystem got no target.
func assertInterlockHolds(t *testing.T, l *lab.Lab, node string) {
	t.Helper()
	checks := []struct{ what, script, want string }{
		{"/data is not mounted", "findmnt -n /data >/dev/null && echo mounted || echo missing", "missing"},
		{"the boot did not start beegfs-storage", "systemctl is-enabled beegfs-storage; systemctl is-active beegfs-storage || true", "enabled\ninactive"},
		{"systemd refuses to start it", "systemctl start beegfs-storage 2>&1 >/dev/null | grep -c 'dependency job' || true", "1"},
		// timeout would end a daemon that started; it must exit on its own with status 1.
		{"the daemon refuses by itself", "timeout 20 /opt/beegfs/sbin/beegfs-storage cfgFile=/etc/beegfs/beegfs-storage.conf >/dev/null 2>&1; echo $?", "1"},
		{"nothing was initialised on the root filesystem", "ls -A /data", ""},
	}
	for _, c := range checks {
		if got := onHost(t, l, node, c.script); got != c.want {
			t.Fatalf("%s with /data missing: %s: got %q, want %q", node, c.what, got, c.want)
		}
	}
}

// TestAccBeegfs_sharedHomes is the guide's reason for fixed UIDs: with the users resource and
// BeeGFS over /home on login01 and gpu01, a file alice writes on gpu01 is alice's on login01.
func TestAccBeegfs_sharedHomes(t *testing.T) {
	l := lab.Require(t)
	nodes := []string{lab.LoginHost, "gpu01"}
	installBeegfs(t, l, "login01", "beegfs-mgmtd", "beegfs-meta")
	prepareFreshBeegfs(t, l, nodes)
	prepareStorageHost(t, l, "gpu01")
	const written = "/home/alice/written-on-gpu01"
	users := fmt.Sprintf(`
resource "gpucluster_group" "users" {
  name             = "users"
  gid              = 100
  allow_system_gid = true
  nodes            = %[1]s
}

resource "gpucluster_user" "alice" {
  name       = "alice"
  uid        = 1001
  group      = gpucluster_group.users.id
  nodes      = %[1]s
  home_on    = "login01"
  depends_on = [gpucluster_beegfs_client.login01]
}
`, hclList(nodes))
	config := beegfsCluster{storage: []string{"gpu01"}, clients: nodes, extra: users}.config(l)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkOnHost(l, "login01", "findmnt -n /home >/dev/null && echo mounted || echo local", "local"),
			checkOnHost(l, "gpu01", "findmnt -n /home >/dev/null && echo mounted || echo local", "local"),
			// Destroy leaves the shared homes alone.
			checkOnHost(l, "login01", "stat -c %u "+lab.StandInNamespace+"/alice/written-on-gpu01", "1001"),
		),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("mounted"), knownvalue.Bool(true)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkOnHost(l, "gpu01", "runuser -u alice -- sh -c 'echo from gpu01 > "+written+"' && findmnt -n -o FSTYPE /home", labClientFSType),
				checkOnHost(l, "login01", "stat -c '%U %u %G' "+written+"; cat "+written, "alice 1001 users\nfrom gpu01"),
			),
		}},
	})
}

// TestAccBeegfs_addGPUServer is the guide's "Adding a GPU Server" for storage: a bare gpu04
// joins the lab, the configuration gains its target, and it becomes node 4 with target 401
// and the interlock, while no BeeGFS file on gpu01 changes.
func TestAccBeegfs_addGPUServer(t *testing.T) {
	l := lab.Require(t)
	const newServer = "gpu04"
	if l.Host(newServer).Name != "" {
		t.Fatalf("the lab already has %s; this test adds it to a lab as `make lab-up` starts it", newServer)
	}
	installBeegfs(t, l, "login01", "beegfs-mgmtd", "beegfs-meta")
	prepareStorageHost(t, l, "gpu01")
	grown := labWith(t, l, newServer)
	var before string
	beegfsFiles := "find /etc/beegfs /etc/systemd/system/beegfs-storage.service.d /data/beegfs-storage -type f -exec sha256sum {} + | sort"

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkOnHost(l, "gpu01", "systemctl is-enabled beegfs-storage; cat /data/beegfs-storage/targetNumID", "disabled\n101"),
		Steps: []resource.TestStep{
			{
				Config: beegfsCluster{storage: []string{"gpu01"}}.config(l),
			},
			{
				PreConfig: func() {
					addLabHost(t, l, newServer)
					installBeegfs(t, l, newServer, "beegfs-storage")
					before = onHost(t, l, "gpu01", beegfsFiles)
				},
				Config: beegfsCluster{storage: []string{"gpu01", newServer}}.config(grown),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_beegfs_target.gpu04", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("gpucluster_beegfs_management.cluster", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_beegfs_target.gpu01", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("gpucluster_beegfs_metadata.cluster", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_beegfs_target.gpu04", tfjsonpath.New("target_id"), knownvalue.Int64Exact(401)),
					statecheck.ExpectKnownValue("gpucluster_beegfs_target.gpu04", tfjsonpath.New("node_num_id"), knownvalue.Int64Exact(4)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					// The disk exists only once the lab has added gpu04.
					func(s *terraform.State) error {
						return checkTargetOnHost(l, newServer, "4", "401", diskUUID(t, l, newServer), l.Host(lab.LoginHost).Address)(s)
					},
					checkSameAuth(l, []string{"login01", "gpu01", newServer}),
					func(*terraform.State) error {
						if after := onHost(t, l, "gpu01", beegfsFiles); after != before {
							return fmt.Errorf("BeeGFS files on gpu01 changed when gpu04 was added:\nbefore:\n%s\nafter:\n%s", before, after)
						}
						return nil
					},
				),
			},
		},
	})
}

// checkSameAuth: every node holds the same conn.auth, the one login01 generated.
func checkSameAuth(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		sums := map[string]string{}
		for _, n := range nodes {
			out, err := onHostErr(l, n, "sha256sum < /etc/beegfs/conn.auth")
			if err != nil {
				return err
			}
			sums[n] = out
		}
		for _, n := range nodes[1:] {
			if sums[n] != sums[nodes[0]] {
				return fmt.Errorf("conn.auth on %s differs from %s's: %v", n, nodes[0], sums)
			}
		}
		return nil
	}
}
