package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// metaNode is the metadata node as read, with the directory on the filesystem it is on now.
type metaNode struct {
	daemonNode[beegfs.MetaHost]
	target beegfs.StorageTarget
}

// readNode connects and reads the node; diagnostics explain a failed read, a missing package,
// a filesystem that is not the recorded one (mountpoint and uuid, "" for a new resource) and a
// path that is not on a filesystem of its own.
func (r *beegfsMetadataResource) readNode(ctx context.Context, node, dir, mountpoint, uuid string) (metaNode, diag.Diagnostics) {
	read, diags := readDaemonNode(ctx, r.cluster, metaDaemon, node, dir, beegfs.ReadMeta)
	n := metaNode{daemonNode: read}
	if diags.HasError() {
		return n, diags
	}
	if !beegfs.OnRecordedFilesystem(n.mh.Mount, mountpoint, uuid) {
		diags.Append(metaStore.filesystemMissing(false, node, dir, mountpoint, uuid, n.mh.Mount))
		return n, diags
	}
	var err error
	if n.target, err = n.mh.Target(dir); err != nil {
		diags.Append(nodeAttributeError(path.Root("path"), "Metadata Directory Not On A Filesystem Of Its Own", node,
			dir+" would be on the filesystem mounted at "+n.mh.Mount.Target,
			"Mount the filesystem meant for it (the guide's /beegfs, by UUID in /etc/fstab) and plan again, or choose a path on it.", err))
	}
	return n, diags
}

// checkMetaSetup refuses a directory this resource may neither set up nor adopt, and a setup
// while beegfs-meta.conf names another store that is initialised: beegfs-setup-meta would
// rewrite storeMetaDirectory and start the daemon on a new, empty store.
func checkMetaSetup(ctx context.Context, node, dir string, id int64, n metaNode) diag.Diagnostics {
	var diags diag.Diagnostics
	if _, err := beegfs.MetaSetupNeeded(dir, n.mh.Dir, id); err != nil {
		diags.Append(nodeAttributeError(path.Root("node_num_id"), "Metadata Directory Cannot Be Used", node,
			"The directory "+dir+" is not one this resource may set up or adopt", adviceForeignDir, err))
		return diags
	}
	store, err := beegfs.ReadConfiguredMetaStore(ctx, n.h, n.mh, dir)
	if err == nil {
		err = beegfs.CheckMetaStoreSwitch(dir, store)
	}
	if err != nil {
		diags.Append(nodeAttributeError(path.Root("path"), "Metadata Store Would Be Switched", node,
			beegfs.MetaConfPath+" names another metadata store than "+dir, "Set path to the store the config names; nothing was changed.", err))
	}
	return diags
}

// keptTarget is the interlock an update may write: the recorded UUID, never the one of
// whatever is mounted now.
func keptTarget(node, dir, uuid string, mh beegfs.MetaHost) (beegfs.StorageTarget, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !mh.Dir.Initialised() {
		diags.Append(nodeAttributeError(path.Root("path"), "Metadata Directory Not Initialised", node,
			dir+" has no "+beegfs.NodeNumIDFile+" any more", "Refresh: a metadata directory that is really gone is then planned anew.", nil))
		return beegfs.StorageTarget{}, diags
	}
	t, err := beegfs.KeptMetaTarget(mh, dir, uuid)
	if err != nil {
		diags.Append(nodeAttributeError(path.Root("path"), "Metadata Interlock Does Not Match", node,
			"storeFsUUID is not the UUID of the filesystem the metadata directory was set up on", "Fix the mount, or the file by hand; the provider does not move the interlock.", err))
	}
	return t, diags
}

// setupOnce runs beegfs-setup-meta on a missing or empty directory only, or gives one the
// script prepared without -s the nodeNumID -s writes, and returns the host as read afterwards. A setup that reports the directory as already used is accepted only when
// a fresh read finds the configured node ID there.
func (r *beegfsMetadataResource) setupOnce(ctx context.Context, h *transport.Host, mh beegfs.MetaHost, dir string, id int64, mgmtd string) (beegfs.MetaHost, error) {
	needed, err := beegfs.MetaSetupNeeded(dir, mh.Dir, id)
	if err != nil || (!needed && !mh.Dir.AwaitsIDs()) {
		return mh, err
	}
	if mh.Dir.AwaitsIDs() {
		err = beegfs.WriteAwaitedIDs(ctx, h, dir, beegfs.IDFile{Name: beegfs.NodeNumIDFile, ID: id})
	} else {
		_, err = beegfs.SetupMeta(ctx, h, dir, id, mgmtd)
	}
	if err != nil {
		return mh, err
	}
	again, err := beegfs.ReadMeta(ctx, h, dir)
	if err != nil {
		return mh, err
	}
	if !again.Dir.Initialised() {
		return again, fmt.Errorf("%s holds no %s after beegfs-setup-meta", dir, beegfs.NodeNumIDFile)
	}
	return again, beegfs.CheckMetaNodeNumID(dir, again.Dir, id)
}

// configure writes the interlock and the drop-in; restart reports a config change.
func (r *beegfsMetadataResource) configure(ctx context.Context, h *transport.Host, mh beegfs.MetaHost, rel beegfs.Release, target beegfs.StorageTarget, mgmtd string) (restart bool, err error) {
	if !mh.Config.Exists {
		return false, fmt.Errorf("%s does not exist; reinstall %s, which ships it", beegfs.MetaConfPath, beegfs.MetaPackage)
	}
	c, err := beegfs.ConfigureMeta(rel, mh.Config.Content, target, mgmtd)
	if err != nil {
		return false, err
	}
	restart, err = beegfs.WriteConf(ctx, h, beegfs.MetaConfPath, mh.Config, c, 0o644)
	if err != nil {
		return false, err
	}
	_, err = beegfs.WriteMetaDropIn(ctx, h, h, mh)
	return restart, err
}

// metaProblems is MetaProblems, or the missing package when there is no release to check against.
func metaProblems(mh beegfs.MetaHost, w beegfs.MetaWant) []string {
	rel, err := mh.Release()
	if err != nil {
		return []string{err.Error()}
	}
	return beegfs.MetaProblems(mh, rel, w)
}
