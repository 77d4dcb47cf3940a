package provider

import (
	"context"
	"fmt"
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

// adoptBeegfsResources declares the BeeGFS that tools/lab-build-by-hand.sh set up with the
// guide's commands: management and metadata on login01, target N01 of node N on each GPU
// server, the client over /home everywhere (the lab's stand-in mounts a tmpfs).
const adoptBeegfsResources = `
locals {
  beegfs_nodes = %[1]s
  beegfs_gpus  = %[2]s
}

resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = "/beegfs/mgmtd/mgmtd.sqlite"
  auth_nodes = local.beegfs_gpus
}

resource "gpucluster_beegfs_metadata" "cluster" {
  node        = "login01"
  path        = "/beegfs/meta"
  node_num_id = 1
  mgmtd_host  = "10.0.0.10"
}

resource "gpucluster_beegfs_target" "gpu" {
  for_each    = toset(local.beegfs_gpus)
  node        = each.key
  node_num_id = tonumber(trimprefix(each.key, "gpu"))
  mgmtd_host  = "10.0.0.10"
}

resource "gpucluster_beegfs_client" "node" {
  for_each        = toset(local.beegfs_nodes)
  node            = each.key
  mgmtd_host      = "10.0.0.10"
  expected_fstype = %[3]q
}
`

// adoptBeegfsImports are the import IDs each resource's page documents.
var adoptBeegfsImports = importBlock("gpucluster_beegfs_management.cluster", `"login01@${join(",", local.beegfs_gpus)}"`) +
	importBlock("gpucluster_beegfs_metadata.cluster", `"login01:/beegfs/meta"`) +
	importEach("toset(local.beegfs_gpus)", "gpucluster_beegfs_target.gpu", `"${each.key}:/data/beegfs-storage"`) +
	importEach("toset(local.beegfs_nodes)", "gpucluster_beegfs_client.node", "each.key")

var adoptBeegfsRelease = released("gpucluster_beegfs_management.cluster", "gpucluster_beegfs_metadata.cluster",
	"gpucluster_beegfs_target.gpu", "gpucluster_beegfs_client.node")

// BeeGFS set up by the guide's own commands (conn.auth by dd, a certificate by openssl, the
// guide's drop-in names, the interlock keys by sed) imports with an empty plan, and neither the
// import nor the apply after it changes a file under /etc, a BeeGFS directory or a daemon.
func TestAccAdoptBeegfs_handBuiltCluster(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	buildByHand(t, l)
	config := providerConfig(l, "") + fmt.Sprintf(adoptBeegfsResources, hclList(nodes), hclList(nodes[1:]), labClientFSType)
	var found, imported string
	snapshot := func(withState bool) string { return hostSnapshot(t, l, withState) + beegfsSnapshot(t, l) }
	var checks []statecheck.StateCheck
	for _, a := range append([]string{"gpucluster_beegfs_management.cluster", "gpucluster_beegfs_metadata.cluster"}, beegfsInstances(nodes)...) {
		checks = append(checks, statecheck.ExpectKnownValue(a, tfjsonpath.New("status"), knownvalue.StringExact(inSync)))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return sameSnapshot("releasing BeeGFS from the state", found, snapshot(false))
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() { found = snapshot(false) },
				Config:    config + adoptBeegfsImports,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: append(checks,
					statecheck.ExpectKnownValue(`gpucluster_beegfs_target.gpu["gpu02"]`, tfjsonpath.New("target_id"), knownvalue.Int64Exact(201)),
					hostCheck(func() error {
						imported = snapshot(true)
						return sameSnapshot("the import", found, snapshot(false))
					})),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{hostCheck(func() error {
					return sameSnapshot("the apply after the import", imported, snapshot(true))
				})},
			},
			{
				// Repairing an adopted target starts beegfs-storage again and writes no drop-in
				// of the provider's own beside the guide's storage.conf.
				PreConfig: func() { onHost(t, l, "gpu01", "systemctl stop beegfs-storage") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(`gpucluster_beegfs_target.gpu["gpu01"]`, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(`gpucluster_beegfs_target.gpu["gpu02"]`, plancheck.ResourceActionNoop),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{hostCheck(func() error {
					return checkOnHost(l, "gpu01", "systemctl is-active beegfs-storage; ls /etc/systemd/system/beegfs-storage.service.d", "active\nstorage.conf")(nil)
				})},
			},
			{
				PreConfig: func() { found = snapshot(false) },
				Config:    providerConfig(l, "") + adoptBeegfsRelease,
				Check:     handedOver(l),
			},
		},
	})
}

// beegfsInstances are the addresses of the target and client instances of adoptBeegfsResources.
func beegfsInstances(nodes []string) []string {
	var addrs []string
	for _, n := range nodes[1:] {
		addrs = append(addrs, fmt.Sprintf("gpucluster_beegfs_target.gpu[%q]", n))
	}
	for _, n := range nodes {
		addrs = append(addrs, fmt.Sprintf("gpucluster_beegfs_client.node[%q]", n))
	}
	return addrs
}

// beegfsSnapshot adds to hostSnapshot what only BeeGFS has: its daemons' start times, its
// directories' files and the mounts over /home.
func beegfsSnapshot(t *testing.T, l *lab.Lab) string {
	t.Helper()
	const script = `for u in beegfs-mgmtd beegfs-meta beegfs-storage beegfs-client; do systemctl show -p Id -p ExecMainStartTimestampMonotonic -p ActiveEnterTimestampMonotonic -p MainPID "$u.service"; done
find /beegfs/mgmtd /beegfs/meta /data/beegfs-storage -type f -printf '%p %T@ ' -exec sha256sum {} \; 2>/dev/null | sort
findmnt -n -o TARGET,SOURCE,FSTYPE /home`
	var b strings.Builder
	for _, n := range labNodeNames(l) {
		fmt.Fprintf(&b, "== %s beegfs\n%s\n", n, onHost(t, l, n, script))
	}
	return b.String()
}

// undoBeegfsByHand takes the hand-built BeeGFS down again: clients first, so admin's local home
// is back before anything else, then the daemons, the drop-ins, the shared files, the stores,
// the shipped config files and the shared namespace.
func undoBeegfsByHand(t *testing.T, l *lab.Lab) {
	for _, n := range labNodeNames(l) {
		script := `systemctl disable --now beegfs-client 2>/dev/null; ! mountpoint -q /home` + "\n"
		if _, stderr, err := l.Exec(context.Background(), n, script); err != nil {
			t.Errorf("unmount the hand-built BeeGFS on %s: %v: %s", n, err, stderr)
		}
	}
	for _, n := range labNodeNames(l) {
		_, stderr, err := l.Exec(context.Background(), n, fmt.Sprintf(`systemctl disable --now beegfs-storage beegfs-meta beegfs-mgmtd 2>/dev/null
rm -rf /etc/systemd/system/beegfs-*.service.d && systemctl daemon-reload
rm -f %[1]s %[2]s %[3]s
for p in beegfs-mgmtd beegfs-meta beegfs-storage beegfs-client; do
	dpkg-deb --fsys-tarfile %[4]s/${p}_%[5]s_all.deb | tar -x -C / ./etc/beegfs
done
rm -rf /beegfs/mgmtd /beegfs/meta /data/beegfs-storage /mnt/beegfs
find %[6]s -mindepth 1 -delete`, beegfs.ConnAuthPath, beegfs.TLSCertPath, beegfs.TLSKeyPath, lab.RepoDir, lab.StandInVersion, lab.StandInNamespace))
		if err != nil {
			t.Errorf("undo the hand-built BeeGFS on %s: %v: %s", n, err, stderr)
		}
	}
}
