package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// readStorage reads what the target resource needs of the node in one round trip.
func readStorage(ctx context.Context, h transport.Executor, node string, want beegfs.TargetIdentity) (beegfs.StorageHost, diag.Diagnostics) {
	var diags diag.Diagnostics
	hs, err := beegfs.ReadStorageHost(ctx, h, want.Directory, want.TargetID)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Storage", node, "Reading the storage service, its config and "+want.Directory+" failed", adviceRead, err))
	}
	return hs, diags
}

// checkTargetHost reads the node and refuses what must not be set up or kept there. mountpoint
// and uuid are the filesystem the target was recorded on, "" for a new target; creating says
// whether the resource is being created, when a directory prepared without IDs gets them.
func checkTargetHost(ctx context.Context, h transport.Executor, node string, want beegfs.TargetIdentity, mountpoint, uuid string, creating bool) (beegfs.StorageHost, diag.Diagnostics) {
	hs, diags := readStorage(ctx, h, node, want)
	if diags.HasError() {
		return hs, diags
	}
	if _, err := hs.Release(); err != nil {
		diags.Append(nodeAttributeError(path.Root("node"), "BeeGFS Not Installed", node,
			"The "+beegfs.StoragePackage+" package is not installed, or its version is not one the provider knows", installBeeGFSAdvice, err))
		return hs, diags
	}
	if !beegfs.OnRecordedFilesystem(hs.Mount, mountpoint, uuid) {
		diags.Append(storageStore.filesystemMissing(false, node, want.Directory, mountpoint, uuid, hs.Mount))
		return hs, diags
	}
	if err := beegfs.CheckSeparateFilesystem(want.Directory, hs.Mount.Target); err != nil {
		diags.Append(nodeAttributeError(path.Root("path"), "Storage Path Not On Its Own Filesystem", node,
			"The target directory would land on the OS disk", "Mount the target's filesystem (by UUID in /etc/fstab) and put path below it.", err))
		return hs, diags
	}
	conf, err := hs.ParseConf()
	if err == nil {
		var listed []beegfs.StorageTarget
		if listed, err = beegfs.StorageTargets(conf); err == nil {
			err = checkListedUUID(listed, want.Directory, hs.Mount)
		}
	}
	if err != nil {
		diags.Append(nodeAttributeError(path.Root("path"), "Storage Interlock Does Not Match", node,
			"The interlock in "+beegfs.StorageConfPath+" does not match the mounted filesystem", "Repair the file by hand; the provider does not guess.", err))
		return hs, diags
	}
	switch {
	case hs.Dir.Initialised():
		if err := beegfs.CheckDirIDs(want, hs.Dir); err != nil {
			diags.Append(nodeAttributeError(path.Root("target_id"), "Storage Target IDs Differ", node,
				want.Directory+" is already a storage target with other IDs, and beegfs-setup-storage never runs twice",
				"Set node_num_id and target_id to the IDs on disk, or choose another path.", err))
		}
	case hs.Dir.AwaitsIDs() && creating:
		if err := beegfs.CheckAwaitedIDs(want, hs.Dir); err != nil {
			diags.Append(nodeAttributeError(path.Root("target_id"), "Storage Target IDs Differ", node,
				want.Directory+" was set up by beegfs-setup-storage with another target ID", "Set target_id to the ID on disk, or choose another path.", err))
		}
	case hs.Dir.Exists && !hs.Dir.Empty && mountpoint != "":
		diags.Append(nodeAttributeError(path.Root("path"), "Storage Target ID Files Missing", node,
			want.Directory+" still holds data, but its "+beegfs.NodeNumIDFile+" and "+beegfs.TargetNumIDFile+" files are gone",
			fmt.Sprintf("Put them back (node %d, target %d: one number and a newline in each) from a backup or by hand. "+
				"The provider never sets up a directory that holds data again.", want.NodeNumID, want.TargetID), nil))
	case hs.Dir.Exists && !hs.Dir.Empty:
		diags.Append(nodeAttributeError(path.Root("path"), "Storage Directory Not Empty", node,
			want.Directory+" holds files but neither "+beegfs.FormatFile+" nor "+beegfs.NodeNumIDFile+": no BeeGFS setup tool prepared it", "Choose an empty or missing directory; beegfs-setup-storage refuses a non-empty one.", nil))
	}
	return hs, diags
}

// checkListedUUID refuses a UUID listed for dir that is not the mounted filesystem's, which the
// daemon refuses; a target listed with none is not checked, by the daemon either.
func checkListedUUID(listed []beegfs.StorageTarget, dir string, m beegfs.Mount) error {
	for _, t := range listed {
		if t.Directory == dir && t.FsUUID != "" {
			return beegfs.CheckMountedUUID(t, m.Target, m.UUID)
		}
	}
	return nil
}

// checkHostIDs refuses IDs that other targets of the host's own config hold on disk.
func checkHostIDs(ctx context.Context, h transport.Executor, node string, want beegfs.TargetIdentity, hs beegfs.StorageHost) diag.Diagnostics {
	var diags diag.Diagnostics
	conf, err := hs.ParseConf()
	if err != nil {
		return diags // reported by checkTargetHost
	}
	listed, err := beegfs.StorageTargets(conf)
	if err != nil {
		return diags
	}
	others := beegfs.OtherDirectories(listed, want.Directory)
	dirs, err := beegfs.ReadTargetDirs(ctx, h, others)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Storage", node, "Reading the ID files of the other targets in "+beegfs.StorageConfPath+" failed", adviceRead, err))
		return diags
	}
	existing := beegfs.HostTargets(want.Host, want.Directory, listed, dirs)
	if err := beegfs.CheckIDConflicts(existing, want); err != nil {
		attr := beegfs.ConflictAttribute(existing, want)
		diags.Append(nodeAttributeError(path.Root(attr), "Storage Target ID Already Used", node,
			"Another target in "+beegfs.StorageConfPath+" already uses this "+attr, "Choose another "+attr+".", err))
	}
	return diags
}

// setUpTarget runs beegfs-setup-storage on a missing or empty directory and reads the host
// again. A refusal as "already initialised" is never taken as success: the IDs on disk decide.
func setUpTarget(ctx context.Context, h transport.Executor, node string, want beegfs.TargetIdentity, mgmtd string) (beegfs.StorageHost, diag.Diagnostics) {
	var diags diag.Diagnostics
	outcome, err := beegfs.SetupStorage(ctx, h, beegfs.StorageSetup{Path: want.Directory, NodeNumID: want.NodeNumID, TargetID: want.TargetID, Mgmtd: mgmtd})
	if outcome == beegfs.Failed {
		diags.Append(nodeError("Cannot Set Up Storage Target", node, "beegfs-setup-storage failed", adviceSetup, err))
		return beegfs.StorageHost{}, diags
	}
	hs, err := beegfs.ReadStorageHost(ctx, h, want.Directory, want.TargetID)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Storage", node, "Reading the target after beegfs-setup-storage failed", adviceRead, err))
		return hs, diags
	}
	if err := beegfs.CheckDirIDs(want, hs.Dir); err != nil {
		diags.Append(nodeAttributeError(path.Root("target_id"), "Storage Target IDs Differ", node,
			"beegfs-setup-storage reported "+outcome.String()+", but the directory's IDs are not the configured ones", "Nothing else was changed.", err))
	}
	return hs, diags
}

// completeTarget gives a directory beegfs-setup-storage prepared without -s and -i the ID
// files those options write, before its daemon ever registered, and reads the host again.
func completeTarget(ctx context.Context, h transport.Executor, node string, want beegfs.TargetIdentity) (beegfs.StorageHost, diag.Diagnostics) {
	var diags diag.Diagnostics
	err := beegfs.WriteAwaitedIDs(ctx, h, want.Directory,
		beegfs.IDFile{Name: beegfs.NodeNumIDFile, ID: want.NodeNumID}, beegfs.IDFile{Name: beegfs.TargetNumIDFile, ID: want.TargetID})
	if err != nil {
		diags.Append(nodeError("Cannot Set Up Storage Target", node, "Writing the ID files into "+want.Directory+" failed", adviceSetup, err))
		return beegfs.StorageHost{}, diags
	}
	hs, err := beegfs.ReadStorageHost(ctx, h, want.Directory, want.TargetID)
	if err != nil {
		diags.Append(nodeError("Cannot Read BeeGFS Storage", node, "Reading the target after writing its ID files failed", adviceRead, err))
		return hs, diags
	}
	if err := beegfs.CheckDirIDs(want, hs.Dir); err != nil {
		diags.Append(nodeAttributeError(path.Root("target_id"), "Storage Target IDs Differ", node,
			"The directory's IDs are not the configured ones after writing them", "Nothing else was changed.", err))
	}
	return hs, diags
}

// resolveFsUUIDCheck is fs_uuid_check as configured, or when it is not (unknown), what the host's
// config shows for the directory: no check for one set up without (-u), the guide's otherwise.
func resolveFsUUIDCheck(check types.Bool, hs beegfs.StorageHost, dir string) types.Bool {
	if !check.IsUnknown() && !check.IsNull() {
		return check
	}
	return types.BoolValue(!hs.ListsUnchecked(dir))
}

// checkInterlockEdit refuses at plan an interlock the apply could not write. A directory still to
// be set up gets a UUID whatever check says: beegfs-setup-storage lists one.
func checkInterlockEdit(node string, hs beegfs.StorageHost, dir string, check bool) diag.Diagnostics {
	var diags diag.Diagnostics
	withUUID := check || !hs.Dir.Initialised()
	if _, err := hs.InterlockConf(dir, withUUID); err != nil {
		listing := "without a UUID"
		if withUUID {
			listing = "with the UUID of its filesystem"
		}
		diags.Append(nodeAttributeError(path.Root("fs_uuid_check"), "Storage Interlock Cannot Be Written", node,
			beegfs.StorageConfPath+" cannot list "+dir+" "+listing,
			"Nothing was changed. BeeGFS checks every target of a host or none: list a UUID for every target, by hand, in the order of "+
				beegfs.KeyStorageDirectory+" ("+beegfs.KeyFsUUID+" = ,UUID1,UUID2; findmnt -n -o UUID --target DIR prints each), or none, then plan again.", err))
	}
	return diags
}

// writeStorageInterlock puts the target in dir into beegfs-storage.conf with the interlock
// (check: with the filesystem's UUID) and the management host, writing only when that changes
// the file.
func writeStorageInterlock(ctx context.Context, w transport.FileWriter, node string, hs beegfs.StorageHost, dir string, check bool, mgmtd string) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	conf, err := hs.InterlockConf(dir, check)
	if err == nil {
		err = conf.Set(beegfs.KeyMgmtdHost, mgmtd)
	}
	if err != nil {
		diags.Append(nodeError("Cannot Write Storage Interlock", node, beegfs.StorageConfPath+" cannot be edited safely, so nothing was written", adviceStorageLists, err))
		return false, diags
	}
	changed, err := beegfs.WriteConf(ctx, w, beegfs.StorageConfPath, hs.Conf, conf, 0o644)
	if err != nil {
		diags.Append(nodeError("Cannot Write Storage Interlock", node, "Writing "+beegfs.StorageConfPath+" failed", writeAdvice(err), err))
	}
	return changed, diags
}

// writeAdvice tells a write that lost against another writer from one that failed.
func writeAdvice(err error) string {
	if errors.Is(err, transport.ErrWriteConflict) {
		return "Someone changed the file meanwhile, so it was not written; apply again."
	}
	return adviceWrite
}

// removeTarget writes the config without the target, removes its drop-in and restarts or
// disables the service, so that the next start never brings the destroyed target back.
func removeTarget(ctx context.Context, h *transport.Host, node string, want beegfs.TargetIdentity, hs beegfs.StorageHost, removal beegfs.TargetRemoval) diag.Diagnostics {
	var diags diag.Diagnostics
	if removal.Listed {
		if _, err := beegfs.WriteConf(ctx, h, beegfs.StorageConfPath, hs.Conf, removal.Conf, 0o644); err != nil {
			diags.Append(nodeError("Cannot Remove Target From Config", node, "Taking "+want.Directory+" out of "+beegfs.StorageConfPath+" failed", writeAdvice(err), err))
			return diags
		}
	}
	if err := beegfs.RemoveDropIn(ctx, h, beegfs.StorageDropInPath(want.TargetID)); err != nil {
		diags.Append(nodeError("Cannot Remove Drop-In", node, "Removing the target's drop-in failed", adviceStop, err))
		return diags
	}
	switch removal.ServiceAfter(hs.Service, hs.DropIn.Exists) {
	case beegfs.DisableService:
		if err := beegfs.DisableNow(ctx, h, beegfs.ServiceStorage); err != nil {
			diags.Append(nodeError("Cannot Stop Storage Service", node, "Stopping and disabling "+beegfs.ServiceStorage+" failed", adviceStop, err))
		}
	case beegfs.RestartService:
		if err := beegfs.StartServer(ctx, h, beegfs.ServiceStorage, true); err != nil {
			diags.Append(nodeError("Storage Service Does Not Restart", node,
				want.Directory+" is out of "+beegfs.StorageConfPath+", but "+beegfs.ServiceStorage+" did not start again for the host's other targets",
				"Read its refusal below and repair the other targets (apply their resources); the destroyed target is not brought back.", err))
			return diags
		}
		diags.Append(confirmServer(ctx, h, node, beegfs.ServiceStorage, "BeeGFS Storage",
			want.Directory+" is out of "+beegfs.StorageConfPath+"; read the refusal below and repair the host's other targets (apply their resources)")...)
	case beegfs.KeepService:
	}
	return diags
}

// checkWipe allows force_destroy_data only for the target's own directory on the filesystem it
// was set up on.
func checkWipe(node string, want beegfs.TargetIdentity, hs beegfs.StorageHost, mountpoint, uuid string) diag.Diagnostics {
	var diags diag.Diagnostics
	keep := "Nothing was changed. Set force_destroy_data = false (and apply) to destroy the resource without deleting data."
	if !beegfs.OnRecordedFilesystem(hs.Mount, mountpoint, uuid) {
		diags.Append(nodeAttributeError(path.Root("force_destroy_data"), "Storage Filesystem Missing", node,
			"The target's data is not reachable, so it was not deleted", keep, beegfs.FilesystemMissing(want.Directory, mountpoint, uuid, hs.Mount)))
		return diags
	}
	if err := beegfs.CheckWipe(want, hs.Dir); err != nil {
		diags.Append(nodeAttributeError(path.Root("force_destroy_data"), "Storage Directory Not This Target", node,
			"Nothing shows that "+want.Directory+" holds only this target's data, so it was not deleted", keep, err))
	}
	return diags
}
