package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// labMgmtd runs a management service of the test's own on login01, which the storage and
// metadata daemons wait for and register with: a transient unit with a fresh database and
// login01's conn.auth, which nodes get a copy of. A test that declares
// gpucluster_beegfs_management has the provider's instead.
func labMgmtd(t *testing.T, l *lab.Lab, nodes ...string) {
	t.Helper()
	installBeegfs(t, l, lab.LoginHost, "beegfs-mgmtd")
	const dir = "/root/tacc-mgmtd"
	onHost(t, l, lab.LoginHost, `set -e
systemctl stop tacc-mgmtd 2>/dev/null || true
systemctl reset-failed tacc-mgmtd 2>/dev/null || true
if [ ! -e /etc/beegfs/conn.auth ]; then head -c 128 /dev/urandom > /etc/beegfs/conn.auth; chmod 400 /etc/beegfs/conn.auth; fi
rm -rf `+dir+` && mkdir `+dir+` && : > `+dir+`/mgmtd.toml
m="`+beegfs.MgmtdDaemon+` --config-file=`+dir+`/mgmtd.toml --db-file=`+dir+`/mgmtd.sqlite --auth-file=/etc/beegfs/conn.auth --tls-disable=true"
$m --init >/dev/null
systemd-run --quiet --unit=tacc-mgmtd --property=Type=notify $m`)
	t.Cleanup(func() {
		onHost(t, l, lab.LoginHost, "systemctl stop tacc-mgmtd; systemctl reset-failed tacc-mgmtd 2>/dev/null; rm -rf "+dir+"; true")
	})
	auth := onHost(t, l, lab.LoginHost, "base64 -w0 < /etc/beegfs/conn.auth")
	for _, n := range nodes {
		if n != lab.LoginHost {
			onHost(t, l, n, "echo "+auth+" | base64 -d > /etc/beegfs/conn.auth && chmod 400 /etc/beegfs/conn.auth")
		}
	}
}

// The storage unit is Type=simple, so systemctl start succeeds before the daemon's own checks.
// A daemon that refuses a start (here the interlock: the host's config lists another target
// that was never set up) fails the apply with the daemon's own line, naming the node; it is
// not reported as a target in sync.
func TestAccBeegfsTarget_startRefusedByInterlock(t *testing.T) {
	const node = "gpu02"
	l, uuid := storageLab(t, node)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				onHost(t, l, node, "rm -rf /data/other-target; sed -i 's|^storeStorageDirectory.*|storeStorageDirectory = ,/data/other-target|; "+
					"s|^storeFsUUID.*|storeFsUUID = ,"+uuid+"|; s|^storeAllowFirstRunInit.*|storeAllowFirstRunInit = false|' "+beegfs.StorageConfPath)
			},
			Config: targetConfig(l, node, 2, ""),
			ExpectError: regexp.MustCompile(`(?s)Cannot Start BeeGFS Storage.*` + node + `.*` +
				wrapped("Error: Found uninitialized storage target directory and initialization has been disabled: /data/other-target")),
		}},
	})
	if got := onHost(t, l, node, "systemctl is-active beegfs-storage || true"); got != "failed" {
		t.Errorf("beegfs-storage on %s is %q; the refusal the apply reported should have left it failed", node, got)
	}
}

// A metadata daemon that ends at once because conn.auth is missing fails the apply with its
// own "Unrecoverable error" line, naming the node.
func TestAccBeegfsMetadata_startWithoutConnAuth(t *testing.T) {
	l := lab.Require(t)
	const node, dir = lab.LoginHost, "/beegfs/gpucluster-test-meta-noauth"
	installBeegfs(t, l, node, "beegfs-meta")
	pristine := "dpkg-deb --fsys-tarfile " + lab.RepoDir + "/beegfs-meta_" + lab.StandInVersion + "_all.deb | tar -xO ." + beegfs.MetaConfPath
	onHost(t, l, node, "cp -a "+beegfs.MetaConfPath+" /root/beegfs-meta.conf.tacc; "+pristine+" > "+beegfs.MetaConfPath+
		"; if [ -e "+beegfs.ConnAuthPath+" ]; then mv "+beegfs.ConnAuthPath+" /root/conn.auth.tacc; fi")
	t.Cleanup(func() {
		onHost(t, l, node, "systemctl disable --now beegfs-meta 2>/dev/null; systemctl reset-failed beegfs-meta 2>/dev/null; rm -rf "+dir+" "+beegfs.MetaDropInPath+
			"; systemctl daemon-reload; cp /root/beegfs-meta.conf.tacc "+beegfs.MetaConfPath+
			"; if [ -e /root/conn.auth.tacc ]; then mv /root/conn.auth.tacc "+beegfs.ConnAuthPath+"; fi; true")
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_metadata" "test" {
  node       = %q
  path       = %q
  mgmtd_host = "10.0.0.10"
}
`, node, dir),
			ExpectError: regexp.MustCompile(`(?s)Cannot Start BeeGFS Metadata.*` + node + `.*` +
				wrapped("Unrecoverable error: Unable to open auth file: "+beegfs.ConnAuthPath+" (SysErr: No such file or directory)")),
		}},
	})
	if got := onHost(t, l, node, "systemctl is-active beegfs-meta || true"); got != "failed" {
		t.Errorf("beegfs-meta is %q; the refusal the apply reported should have left it failed", got)
	}
	if strings.Contains(onHost(t, l, node, "ls "+dir), "registrationToken") {
		t.Error("beegfs-meta registered without conn.auth")
	}
}

// beegfs-setup-storage run without -s and -i leaves format.conf and no ID files: BeeGFS 8
// counts the directory as set up, and its daemon would take IDs from the management service on
// its first start. The resource adopts it with its own IDs, which it writes as -s and -i
// would have, and the daemon registers with them.
func TestAccBeegfsTarget_adoptsSetUpWithoutIDs(t *testing.T) {
	const node = "gpu01"
	l, uuid := storageLab(t, node)
	config := targetConfig(l, node, 1, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					onHost(t, l, node, beegfs.SetupStorageTool+" -p /data/beegfs-storage -m 10.0.0.10 >/dev/null && cp /data/beegfs-storage/format.conf /root/format.conf.tacc")
				},
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTargetOnHost(l, node, "1", "101", uuid, "10.0.0.10"),
					checkOnHost(l, node, "cmp /root/format.conf.tacc /data/beegfs-storage/format.conf && test -s /data/beegfs-storage/targetID && echo kept", "kept"),
				),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// A target the real tools set up (the guide's beegfs-setup-storage with -s and -i) and its
// daemon started once, so that the directory holds the 8.x files (format.conf, targetID,
// lock.pid, chunks/) and no originalNodeID, is adopted as it is: the daemon keeps running on
// the same files, and the next plan is empty.
func TestAccBeegfsTarget_adoptsRealToolsFirstStart(t *testing.T) {
	const node = "gpu01"
	l, uuid := storageLab(t, node)
	config := targetConfig(l, node, 1, "")
	onHost(t, l, node, beegfs.SetupStorageTool+" -p /data/beegfs-storage -s 1 -i 101 -m 10.0.0.10 >/dev/null && systemctl start beegfs-storage && "+
		"pid=$(systemctl show -p ExecMainPID --value beegfs-storage); for i in $(seq 100); do journalctl -q -o cat _PID=$pid | grep -q 'Node registration successful' && break; sleep 0.2; done; "+
		"journalctl -q -o cat _PID=$pid | grep -q 'Node registration successful'")
	files := onHost(t, l, node, "cd /data/beegfs-storage && ls && stat -c '%i %Y' targetID")
	if strings.Contains(files, "originalNodeID") || !strings.Contains(files, "format.conf") {
		t.Fatalf("the first start left %q", files)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkTargetOnHost(l, node, "1", "101", uuid, "10.0.0.10"),
					checkOnHost(l, node, "cd /data/beegfs-storage && ls && stat -c '%i %Y' targetID", files),
				),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
