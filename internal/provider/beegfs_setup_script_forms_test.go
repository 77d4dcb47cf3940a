package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// setupStorageRU is what ThinkParQ's beegfs-setup-storage -p DIR -s 2 -i 201 -m MGMT -r -u
// (8.3.1) leaves: format.conf, chunks/, buddymir/ and the ID files in the directory, and its own
// sed edits of the config: sysMgmtdHost, and storeStorageDirectory replaced by the bare path
// (-r). -u leaves storeFsUUID empty. storeAllowFirstRunInit = false is the guide's edit by hand;
// so is its drop-in storage.conf.
const setupStorageRU = `set -e
d=/data/beegfs-storage cfg=/etc/beegfs/beegfs-storage.conf
mkdir -p "$d/chunks" "$d/buddymir"
printf '# This file was auto-generated. Do not modify it!\nversion=3\n' >> "$d/format.conf"
echo 201 > "$d/targetNumID"
echo 2 > "$d/nodeNumID"
sed -i "s/\(^sysMgmtdHost.*=\).*/\1 %[1]s/" "$cfg"
sed -i "s|\(^storeStorageDirectory.*=\).*$|\1 $d|" "$cfg"
sed -i "s/\(^storeAllowFirstRunInit.*=\).*/\1 false/" "$cfg"
mkdir -p /etc/systemd/system/beegfs-storage.service.d
printf '[Unit]\nRequiresMountsFor=/data\n' > /etc/systemd/system/beegfs-storage.service.d/storage.conf
systemctl daemon-reload
systemctl enable --now beegfs-storage 2>/dev/null`

// setupMetaU is what beegfs-setup-meta -p /beegfs/meta -s 1 -m MGMT -u (8.3.1) leaves: format.conf
// and nodeNumID, sysMgmtdHost and storeMetaDirectory set by its sed edits, storeFsUUID empty.
// As with the target, storeAllowFirstRunInit = false, the drop-in and conn.auth are the guide's
// steps by hand.
const setupMetaU = `set -e
d=/beegfs/meta cfg=/etc/beegfs/beegfs-meta.conf
[ -e /etc/beegfs/conn.auth ] || { dd if=/dev/urandom of=/etc/beegfs/conn.auth bs=128 count=1 status=none; chmod 400 /etc/beegfs/conn.auth; }
cp -a "$cfg" /root/beegfs-meta.conf.tacc
mkdir -p "$d"
printf '# This file was auto-generated. Do not modify it!\nversion=4\nxattr=true\n' >> "$d/format.conf"
echo 1 > "$d/nodeNumID"
sed -i "s/\(^sysMgmtdHost.*=\).*/\1 %[1]s/" "$cfg"
sed -i "s|\(^storeMetaDirectory.*=\).*$|\1 $d|" "$cfg"
sed -i "s/\(^storeAllowFirstRunInit.*=\).*/\1 false/" "$cfg"
mkdir -p /etc/systemd/system/beegfs-meta.service.d
printf '[Unit]\nRequiresMountsFor=/beegfs\n' > /etc/systemd/system/beegfs-meta.service.d/meta.conf
systemctl daemon-reload
systemctl enable --now beegfs-meta 2>/dev/null`

// unitAndFile is a daemon's last start and a file's fingerprint: what an import must leave alone.
func unitAndFile(unit, file string) string {
	return "systemctl show -p ActiveEnterTimestampMonotonic -p MainPID " + unit + "; sha256sum " + file
}

// A target set up by the real tools, with -r's bare path (no leading comma) and -u's empty
// storeFsUUID, imports with an empty plan and without a change on the host; an apply keeps both
// forms while it changes the management host, and only fs_uuid_check = true writes a UUID.
func TestAccBeegfsTarget_setupScriptForms(t *testing.T) {
	const node = "gpu02"
	l, uuid := storageLab(t, node)
	login := l.Host("login01").Address
	onHost(t, l, node, fmt.Sprintf(setupStorageRU, login))
	before := onHost(t, l, node, unitAndFile(beegfs.ServiceStorage, beegfs.StorageConfPath))
	imported := targetConfig(l, node, 2, "") + importBlock(targetResource, `"`+node+`:/data/beegfs-storage"`)
	byName := strings.Replace(targetConfig(l, node, 2, ""), fmt.Sprintf("mgmtd_host  = %q", login), `mgmtd_host  = "login01"`, 1)
	lists := func(uuidList string) resource.TestCheckFunc {
		return checkOnHost(l, node, storageListsScript+"; systemctl is-active beegfs-storage",
			"storeStorageDirectory=/data/beegfs-storage\nstoreFsUUID="+uuidList+"\nactive")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: imported,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("fs_uuid_check"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(targetResource, tfjsonpath.New("target_id"), knownvalue.Int64Exact(201)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, node, unitAndFile(beegfs.ServiceStorage, beegfs.StorageConfPath), before),
					lists(""),
				),
			},
			{
				Config: byName,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(targetResource, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, node, `sed -n 's/^sysMgmtdHost *= */sysMgmtdHost=/p' `+beegfs.StorageConfPath, "sysMgmtdHost=login01"),
					lists(""),
				),
			},
			{
				Config: strings.Replace(byName, `mgmtd_host  = "login01"`, "mgmtd_host  = \"login01\"\n  fs_uuid_check = true", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(targetResource, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: lists("," + uuid),
			},
		},
	})
}

// BeeGFS checks every target of a host or none: beside a target listed without a UUID (-u), a
// new target, which beegfs-setup-storage would list with one, is refused at plan, and nothing on
// the host changes.
func TestAccBeegfsTarget_newTargetBesideUnchecked(t *testing.T) {
	const node = "gpu02"
	l, _ := storageLab(t, node)
	onHost(t, l, node, fmt.Sprintf(setupStorageRU, l.Host("login01").Address))
	before := onHost(t, l, node, unitAndFile(beegfs.ServiceStorage, beegfs.StorageConfPath)+"; ls -A /data")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: targetConfig(l, node, 2, `  path        = "/data/other-target"
  target_id   = 202`),
			ExpectError: diagPattern("Storage Interlock Cannot Be Written", `resource "gpucluster_beegfs_target" "test"`,
				beegfs.StorageConfPath+" cannot list /data/other-target with the UUID of its filesystem on node "+node,
				"BeeGFS checks every target of a host or none", "none for /data/beegfs-storage"),
		}},
	})
	if after := onHost(t, l, node, unitAndFile(beegfs.ServiceStorage, beegfs.StorageConfPath)+"; ls -A /data"); after != before {
		t.Errorf("the refused plan changed %s:\n%s\nwas:\n%s", node, after, before)
	}
}

// The same for metadata set up with beegfs-setup-meta -u: imported with an empty plan and no
// change on login01, kept without a UUID through an apply, given one only when asked.
func TestAccBeegfsMetadata_setupScriptForms(t *testing.T) {
	l := lab.Require(t)
	const node = lab.LoginHost
	installBeegfs(t, l, node, "beegfs-meta")
	// beegfs-meta is Type=simple: the apply waits for its registration.
	labMgmtd(t, l, node)
	uuid := onHost(t, l, node, "findmnt -n -o UUID --target /beegfs")
	// Destroying metadata leaves its directory, as it must: an earlier test's would be adopted.
	// The test moves it aside and starts from the shipped beegfs-meta.conf, and puts back what
	// it found, so later tests see the lab as it was.
	const saved = "/beegfs/.meta-before-forms-test"
	stop := `systemctl disable --now beegfs-meta 2>/dev/null
rm -rf /etc/systemd/system/beegfs-meta.service.d
systemctl daemon-reload
`
	pristine := "dpkg-deb --fsys-tarfile " + lab.RepoDir + "/beegfs-meta_" + lab.StandInVersion + "_all.deb | tar -xO ." + beegfs.MetaConfPath
	onHost(t, l, node, "cp -a "+beegfs.MetaConfPath+" /root/beegfs-meta.conf.forms\n"+stop+
		"if [ -e "+labMetaPath+" ]; then mv "+labMetaPath+" "+saved+"; fi\n"+pristine+" > "+beegfs.MetaConfPath)
	t.Cleanup(func() {
		onHost(t, l, node, stop+"rm -rf "+labMetaPath+"\nif [ -e "+saved+" ]; then mv "+saved+" "+labMetaPath+"; fi\n"+
			"mv /root/beegfs-meta.conf.forms "+beegfs.MetaConfPath)
	})
	onHost(t, l, node, fmt.Sprintf(setupMetaU, "10.0.0.10"))
	before := onHost(t, l, node, unitAndFile(beegfs.ServiceMeta, beegfs.MetaConfPath))
	config := func(mgmtd, extra string) string {
		return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_beegfs_metadata" "test" {
  node       = "login01"
  mgmtd_host = %q
%s
}
`, mgmtd, extra)
	}
	interlock := func(uuid, mgmtd string) resource.TestCheckFunc {
		return checkOnHost(l, node, "grep -E '^(storeFsUUID|storeMetaDirectory|sysMgmtdHost) ' "+beegfs.MetaConfPath+" | sed 's/ *= */=/' | sort; systemctl is-active beegfs-meta",
			"storeFsUUID="+uuid+"\nstoreMetaDirectory="+labMetaPath+"\nsysMgmtdHost="+mgmtd+"\nactive")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMetaDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config: config("10.0.0.10", "") + importBlock(metaAddr, `"login01:`+labMetaPath+`"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(metaAddr, tfjsonpath.New("fs_uuid_check"), knownvalue.Bool(false)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, node, unitAndFile(beegfs.ServiceMeta, beegfs.MetaConfPath), before),
					interlock("", "10.0.0.10"),
				),
			},
			{
				Config: config("login01", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(metaAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: interlock("", "login01"),
			},
			{
				Config: config("login01", "  fs_uuid_check = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(metaAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: interlock(uuid, "login01"),
			},
		},
	})
}
