package provider

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// controller is the management node as read.
type controller = daemonNode[beegfs.MgmtdHost]

// readController connects to the controller and reads it; diagnostics explain a failed read, a
// missing package, a filesystem that is not the recorded one (mountpoint and uuid, "" for a
// new resource) and a database directory on the root filesystem.
func (r *beegfsManagementResource) readController(ctx context.Context, node, dbFile, mountpoint, uuid string) (controller, diag.Diagnostics) {
	c, diags := readDaemonNode(ctx, r.cluster, mgmtdDaemon, node, dbFile, beegfs.ReadMgmtd)
	if diags.HasError() {
		return c, diags
	}
	dir := beegfs.MgmtdStoreDir(dbFile)
	if !beegfs.OnRecordedFilesystem(c.mh.Mount, mountpoint, uuid) {
		diags.Append(mgmtdStore.filesystemMissing(false, node, dir, mountpoint, uuid, c.mh.Mount))
		return c, diags
	}
	if err := beegfs.CheckSeparateFilesystem(dir, c.mh.Mount.Target); err != nil {
		diags.Append(nodeAttributeError(path.Root("db_file"), "Database Not On A Filesystem Of Its Own", node,
			"The directory of "+dbFile+" would be on "+c.mh.Mount.Target,
			"Mount the filesystem meant for it (the guide's /beegfs, by UUID in /etc/fstab) and plan again, or choose a db_file on it.", err))
	}
	return c, diags
}

// checkLiveDatabase refuses a create that would leave behind the database the controller's
// configuration points beegfs-mgmtd at now: only the database at db_file is adopted.
func checkLiveDatabase(ctx context.Context, node, dbFile string, c controller) diag.Diagnostics {
	var diags diag.Diagnostics
	live, err := beegfs.ReadLiveMgmtdStore(ctx, c.h, c.mh, c.rel, dbFile)
	if err != nil {
		diags.Append(nodeAttributeError(path.Root("db_file"), "Cannot Read BeeGFS Management State", node,
			"Reading the database beegfs-mgmtd's configuration names failed, so nothing was changed", adviceRead, err))
		return diags
	}
	if err := beegfs.CheckLiveMgmtdStore(c.rel, dbFile, live); err != nil {
		diags.Append(nodeAttributeError(path.Root("db_file"), "Management Database Would Be Abandoned", node,
			"The management database "+live.Path+", which beegfs-mgmtd's configuration names, would be abandoned",
			"Nothing was changed. "+keepLiveDatabase(c.rel, node, dbFile, live)+
				" If it is really to be discarded, move it away by hand (mv "+live.Path+" "+live.Path+".old) and plan again.", err))
	}
	return diags
}

// keepLiveDatabase says how to hand a live database to the resource: adopted where it is, or,
// from the root filesystem, where the resource keeps none, moved to db_file first.
func keepLiveDatabase(rel beegfs.Release, node, dbFile string, live beegfs.LiveMgmtdStore) string {
	if live.OnRootFS {
		l, dest := rel.Layout(), dbFile
		if rel.Major == 7 {
			dest = beegfs.MgmtdStoreDir(dbFile)
		}
		return "To keep that database, which is on the root filesystem, move it to db_file by hand: stop " + beegfs.ServiceMgmtd +
			", mv " + live.Path + " " + dest + ", set " + l.MgmtdStoreKey + " to " + dest + " in " + l.MgmtdConfigPath + " and start it again; " +
			"the create then adopts it."
	}
	return "To keep that database, import it (terraform import " + mgmtdResourceName + ".NAME " + node +
		" reads db_file from the configuration), or set db_file = \"" + live.Path + "\", which adopts it."
}

// distribute copies conn.auth and cert.pem from the controller to every other auth node. The
// files pass through memory only and go to each node on stdin.
func (r *beegfsManagementResource) distribute(ctx context.Context, ctl *transport.Host, node string, rel beegfs.Release, authNodes []string) diag.Diagnostics {
	var diags diag.Diagnostics
	targets := slices.DeleteFunc(slices.Clone(authNodes), func(n string) bool { return r.cluster.sameNode(n, node) })
	if len(targets) == 0 {
		return diags
	}
	connAuth, cert, err := beegfs.ReadSharedFiles(ctx, ctl, rel)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Shared Files", node, "Reading "+beegfs.ConnAuthPath+" or "+beegfs.TLSCertPath+" failed", adviceRead, err))
		return diags
	}
	defer clear(connAuth)
	failures := r.cluster.onEachNode(ctx, targets, func(_ string, h *transport.Host) error {
		return beegfs.WriteSharedFiles(ctx, h, connAuth, cert)
	})
	diags.Append(failureDiags(failures, "Cannot Copy BeeGFS Shared Files", "Copying "+beegfs.ConnAuthPath+" and "+beegfs.TLSCertPath+" from "+node+" failed",
		"Check that "+beegfs.ConfDir+" exists there (any BeeGFS package creates it), then apply again.")...)
	return diags
}

// copyStatus compares every auth node's copies with the controller's, by fingerprint.
func (r *beegfsManagementResource) copyStatus(ctx context.Context, authNodes []string, node string, mh beegfs.MgmtdHost) (map[string]string, diag.Diagnostics) {
	var mu sync.Mutex
	status := make(map[string]string, len(authNodes))
	failures := r.cluster.onEachNode(ctx, authNodes, func(n string, h *transport.Host) error {
		copied, err := beegfs.ReadSharedCopy(ctx, h)
		if err != nil {
			return err
		}
		mu.Lock()
		status[n] = describeDrift(beegfs.CopyProblems(n, mh.ConnAuthSHA256, mh.CertSHA256, copied))
		mu.Unlock()
		return nil
	})
	for _, f := range failures {
		status[f.node] = "cannot read " + f.node
	}
	return status, failureDiags(failures, "Cannot Read BeeGFS Shared Files", "Reading the fingerprints of the copies from "+node+" failed", adviceRead)
}

// failedCopies turns a node that still differs after the copy into an error.
func failedCopies(status map[string]string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, n := range slices.Sorted(maps.Keys(status)) {
		if s := status[n]; s != inSync && !strings.HasPrefix(s, "cannot read") {
			diags.Append(nodeError("BeeGFS Shared Files Differ", n, "After copying: "+s, "Apply again; if it persists, check the node's disk.", nil))
		}
	}
	return diags
}
