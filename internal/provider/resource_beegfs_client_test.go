package provider

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

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

// The lab's stand-in client bind-mounts the lab-wide tmpfs.
const labClientFSType = "tmpfs"

// A P9 refusal after the migration copied into BeeGFS must not claim that nothing changed.
func TestHomeRefusalError(t *testing.T) {
	account := beegfs.Account{Name: "admin", UID: 1000, Home: "/home/admin"}
	tests := map[bool]struct{ summary, says, never string }{
		false: {"Mount Would Lock Out admin", "Nothing was mounted and nothing changed", "already copied"},
		true:  {"Migrated Home Still Unusable", "already copied into BeeGFS", "nothing changed"},
	}
	for copied, want := range tests {
		d := homeRefusalError("gpu01", "admin", "/home", &beegfs.HomeRefusal{Account: account, MountPath: "/home", OnBeeGFS: errors.New("no authorized_keys"), Copied: copied})
		if d.Summary() != want.summary || !strings.Contains(d.Detail(), want.says) || strings.Contains(d.Detail(), want.never) {
			t.Errorf("copied=%v: %q\n%s", copied, d.Summary(), d.Detail())
		}
	}
}

func beegfsClientConfig(l *lab.Lab, login01Migrate bool, gpu01Mgmtd string) string {
	config := providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_client" "login01" {
  node               = "login01"
  mgmtd_host         = "10.0.0.10"
  migrate_local_home = %t
  expected_fstype    = %q
}
`, login01Migrate, labClientFSType)
	if gpu01Mgmtd == "" {
		return config
	}
	return config + fmt.Sprintf(`
resource "gpucluster_beegfs_client" "gpu01" {
  node            = "gpu01"
  mgmtd_host      = %q
  expected_fstype = %q

  depends_on = [gpucluster_beegfs_client.login01]
}
`, gpu01Mgmtd, labClientFSType)
}

// TestAccBeegfsClient_lifecycle walks the guide's client setup on a fresh BeeGFS: the first
// mount on login01 is refused until migrate_local_home copies admin's home over (P9), gpu01
// then mounts without migrating, and destroy leaves the files on BeeGFS.
func TestAccBeegfsClient_lifecycle(t *testing.T) {
	l := lab.Require(t)
	clients := []string{"login01", "gpu01"}
	prepareFreshBeegfs(t, l, clients)
	withoutServers(t, l, clients)
	localHome := onHost(t, l, "login01", homeFingerprint)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	keysOnBeegfs := lab.StandInNamespace + "/admin/.ssh/authorized_keys"

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkClientsGone(l, clients, keysOnBeegfs, localHome),
		Steps: []resource.TestStep{
			{
				// P9: admin's home is not on BeeGFS yet.
				Config:      beegfsClientConfig(l, false, ""),
				ExpectError: regexp.MustCompile(`(?s)Mount Would Lock Out admin.*login01.*Nothing was mounted.*migrate_local_home`),
			},
			{
				PreConfig: func() { assertRefusalChangedNothing(t, l, localHome) },
				Config:    beegfsClientConfig(l, true, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.login01", tfjsonpath.New("mounted"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.login01", tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.login01", tfjsonpath.New("mount_path"), knownvalue.StringExact("/home")),
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.login01", tfjsonpath.New("id"), knownvalue.StringExact("login01")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMounted(l, "login01"),
					checkOnHost(l, "login01", "stat -c %u:%a "+keysOnBeegfs, "1000:600"),
					checkOnHost(l, "login01", "cat /etc/beegfs/beegfs-mounts.conf", "/home /etc/beegfs/beegfs-client.conf"),
					checkSSHLogin(l, "login01"),
				),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// admin's home is on BeeGFS now: gpu01 mounts without migrating.
				Config: beegfsClientConfig(l, true, "10.0.0.10"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("mounted"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("migrate_local_home"), knownvalue.Bool(false)),
					sameID.AddStateValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("id")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMounted(l, "gpu01"),
					checkOnHost(l, "gpu01", "stat -c %u /home/admin/.ssh/authorized_keys", "1000"),
					checkSSHLogin(l, "gpu01"),
				),
			},
			{
				// In place: a new management host is set up and mounted again.
				Config: beegfsClientConfig(l, true, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_beegfs_client.gpu01", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("mgmtd_host"), knownvalue.StringExact("login01")),
					sameID.AddStateValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("id")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "gpu01", "sed -n 's/^sysMgmtdHost *= *//p' /etc/beegfs/beegfs-client.conf", "login01"),
					checkMounted(l, "gpu01"),
				),
			},
			{
				ResourceName:      "gpucluster_beegfs_client.gpu01",
				ImportState:       true,
				ImportStateIdFunc: idInState("gpucluster_beegfs_client.gpu01"),
				ImportStateVerify: true,
			},
			{
				ResourceName:      "gpucluster_beegfs_client.login01",
				ImportState:       true,
				ImportStateIdFunc: idInState("gpucluster_beegfs_client.login01"),
				ImportStateVerify: true,
				// An action before the first mount, not something the node records.
				ImportStateVerifyIgnore: []string{"migrate_local_home"},
			},
			{
				// The guide's "home directories are missing on one node", by hand, twice over.
				PreConfig: func() {
					onHost(t, l, "gpu01", "umount /home")
					onHost(t, l, "login01", "systemctl stop beegfs-client")
				},
				Config:             beegfsClientConfig(l, true, "login01"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: beegfsClientConfig(l, true, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_beegfs_client.gpu01", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_beegfs_client.login01", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("gpucluster_beegfs_client.gpu01", tfjsonpath.New("mounted"), knownvalue.Bool(true)),
						expectBeforeValue("gpucluster_beegfs_client.gpu01", "mounted", false),
						expectBeforeValue("gpucluster_beegfs_client.login01", "mounted", false),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMounted(l, "gpu01"), checkMounted(l, "login01"), checkSSHLogin(l, "gpu01")),
			},
			{
				// Drift in the files and the service: a changed management host, the shipped mounts
				// file, a disabled service.
				PreConfig: func() {
					onHost(t, l, "gpu01", "sed -i 's/^sysMgmtdHost *=.*/sysMgmtdHost = 10.9.9.9/' /etc/beegfs/beegfs-client.conf")
					onHost(t, l, "login01", "echo '/mnt/beegfs /etc/beegfs/beegfs-client.conf' > /etc/beegfs/beegfs-mounts.conf && systemctl disable beegfs-client")
				},
				Config: beegfsClientConfig(l, true, "login01"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_beegfs_client.gpu01", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("gpucluster_beegfs_client.login01", plancheck.ResourceActionUpdate),
						expectBeforeValue("gpucluster_beegfs_client.gpu01", "mgmtd_host", "10.9.9.9"),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "gpu01", "sed -n 's/^sysMgmtdHost *= *//p' /etc/beegfs/beegfs-client.conf", "login01"),
					checkOnHost(l, "login01", "cat /etc/beegfs/beegfs-mounts.conf", "/home /etc/beegfs/beegfs-client.conf"),
					checkOnHost(l, "login01", "systemctl is-enabled beegfs-client", "enabled"),
					checkMounted(l, "login01"),
				),
			},
		},
	})
}

// homeFingerprint summarises the local /home: every path with its owner, mode and size.
const homeFingerprint = `find /home -xdev -printf '%p %U %m %s\n' | sort | sha256sum`

// prepareFreshBeegfs gives the test a BeeGFS that has never held a home: no client mounted
// anywhere (admin's key stays reachable), no server, database or shipped file changed, an
// empty shared namespace, the client package from
// the lab's repository with its shipped files, and the shared secret that gpucluster_beegfs_management would have distributed.
func prepareFreshBeegfs(t *testing.T, l *lab.Lab, clients []string) {
	t.Helper()
	secret := make([]byte, 128)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	// A management database an earlier test left would refuse this test's targets.
	undoBeegfsByHand(t, l)
	for _, h := range clients {
		installBeegfs(t, l, h, "beegfs-client")
		onHost(t, l, h, fmt.Sprintf(`set -e
echo %s | base64 -d > /etc/beegfs/conn.auth && chmod 400 /etc/beegfs/conn.auth
sed -i 's/^sysMgmtdHost *=.*/sysMgmtdHost                  =/' /etc/beegfs/beegfs-client.conf
echo '/mnt/beegfs /etc/beegfs/beegfs-client.conf' > /etc/beegfs/beegfs-mounts.conf
test -f /home/admin/.ssh/authorized_keys`, base64.StdEncoding.EncodeToString(secret)))
	}
}

// withoutServers lets clients mount with no BeeGFS server running, for tests of the client
// alone: the client module's mount sanity check is off (sysMountSanityCheckMS=0, as the real
// configuration allows).
func withoutServers(t *testing.T, l *lab.Lab, clients []string) {
	t.Helper()
	for _, h := range clients {
		onHost(t, l, h, "sed -i 's/^sysMountSanityCheckMS .*/sysMountSanityCheckMS         = 0/' "+beegfs.ClientConfPath)
	}
}

// assertRefusalChangedNothing: after the P9 refusal, login01's /home is the same local
// directory, the client files are as shipped, the service is off and BeeGFS is still empty.
func assertRefusalChangedNothing(t *testing.T, l *lab.Lab, localHome string) {
	t.Helper()
	checks := []struct{ script, want string }{
		{"mountpoint -q /home && echo mounted || echo local", "local"},
		{homeFingerprint, localHome},
		{"sed -n 's/^sysMgmtdHost *= *//p' /etc/beegfs/beegfs-client.conf", ""},
		{"cat /etc/beegfs/beegfs-mounts.conf", "/mnt/beegfs /etc/beegfs/beegfs-client.conf"},
		{"systemctl is-enabled beegfs-client || true", "disabled"},
		{"ls -A " + lab.StandInNamespace, ""},
		{"findmnt -n -o TARGET | grep -c gpucluster-beegfs-staging || true", "0"},
		{"ls /run | grep -c gpucluster-beegfs-staging || true", "0"},
	}
	for _, c := range checks {
		if got := onHost(t, l, "login01", c.script); got != c.want {
			t.Fatalf("after the refusal, login01: %s: got %q, want %q", c.script, got, c.want)
		}
	}
}

// checkMounted is the guide's check: findmnt /home shows the client's filesystem.
func checkMounted(l *lab.Lab, host string) resource.TestCheckFunc {
	return checkOnHost(l, host, "findmnt -n -o FSTYPE --mountpoint /home", labClientFSType)
}

// checkSSHLogin logs in as admin with the lab key from outside the provider, through login01
// for a GPU server as the provider does: the key must still be found under the mounted /home.
func checkSSHLogin(l *lab.Lab, host string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		address := ""
		for _, h := range l.Hosts {
			if h.Name == host {
				address = h.Address
			}
		}
		args := []string{"-i", l.AdminKeyPath, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile=" + l.KnownHostsPath, "-o", "StrictHostKeyChecking=yes"}
		if host != "login01" {
			args = append(args, "-o", fmt.Sprintf("ProxyCommand=ssh -i %s -o BatchMode=yes -o UserKnownHostsFile=%s -W %%h:%%p %s@login01", l.AdminKeyPath, l.KnownHostsPath, l.AdminUser))
		}
		args = append(args, l.AdminUser+"@"+address, "findmnt -n -o FSTYPE --target \"$HOME\"")
		out, err := exec.CommandContext(context.Background(), "ssh", args...).CombinedOutput() //nolint:gosec // G204: the lab's own key and hosts.
		if err != nil {
			return fmt.Errorf("ssh to %s as %s after the mount: %w: %s", host, l.AdminUser, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != labClientFSType {
			return fmt.Errorf("ssh to %s: admin's home is on %q, want BeeGFS (%s)", host, got, labClientFSType)
		}
		return nil
	}
}

// checkClientsGone: destroy disabled the clients, the local /home is back, and BeeGFS still
// holds admin's home (seen from gpu02, which never mounted it).
func checkClientsGone(l *lab.Lab, clients []string, keysOnBeegfs, localHome string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, h := range clients {
			if err := checkOnHost(l, h, "systemctl is-enabled beegfs-client || true", "disabled")(nil); err != nil {
				return fmt.Errorf("after destroy: %w", err)
			}
			if err := checkOnHost(l, h, "mountpoint -q /home && echo mounted || echo local", "local")(nil); err != nil {
				return fmt.Errorf("after destroy, /home must be the local directory: %w", err)
			}
		}
		if err := checkOnHost(l, "login01", homeFingerprint, localHome)(nil); err != nil {
			return fmt.Errorf("the local /home changed: %w", err)
		}
		if _, err := onHostErr(l, "gpu02", "test -s "+keysOnBeegfs); err != nil {
			return fmt.Errorf("admin's keys are gone from BeeGFS after destroy: %w", err)
		}
		return nil
	}
}

// A mount the sanity check canceled names the service, the node behind the address and the
// port to open, with the module's own line.
func TestMountCheckErrorNamesNodeAndPort(t *testing.T) {
	f := &beegfs.MountCheckFailure{Service: "beegfs-storage", Endpoint: "10.0.0.11:8003", Line: "beegfs: mount(7): Mount sanity check: Retrieval of storage server free space info failed."}
	nodeOf := func(a string) string { return map[string]string{"10.0.0.11": "gpu01"}[a] }
	d := mountCheckError("login01", f, nodeOf, errors.New("journal"))
	for _, want := range []string{"beegfs-storage on gpu01 (10.0.0.11), port 8003", "Retrieval of storage server free space info failed", "open TCP and UDP port 8003 there to login01", "Original Error: journal"} {
		if !strings.Contains(d.Detail(), want) {
			t.Errorf("detail lacks %q:\n%s", want, d.Detail())
		}
	}
	if d.Summary() != "BeeGFS Mount Sanity Check Failed" {
		t.Errorf("summary %q", d.Summary())
	}
}
