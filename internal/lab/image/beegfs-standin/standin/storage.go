package main

// The STAND-IN beegfs-storage: the real storage daemon's start-up checks,
// files and registration (daemon.go), with the targets of
// storeStorageDirectory and the storeFsUUID list beside it.

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func init() { tools["beegfs-storage"] = storageMain }

func storageMain(args []string) int { return runDaemon(storageSpec(), args) }

func storageSpec() daemonSpec {
	return daemonSpec{
		name:           "beegfs-storage",
		title:          "BeeGFS Storage Node",
		nodeType:       nodeStorage,
		portKey:        "connStoragePort",
		port:           portStorage,
		preregCanceled: "Node pre-registration at management node canceled",
		defaults:       daemonDefaults("beegfs-storage", "connStoragePort", portStorage),
		preinit:        storagePreinit,
		checkUUIDs:     storageCheckUUIDs,
		dirs:           storageDirs,
		initStorage:    storageInitStorage,
		prepare:        storagePrepare,
		record:         storageRecord,
		handle:         storageHandle,
	}
}

func storageDirs(d *daemon) []string { return d.conf.list("storeStorageDirectory") }

func storagePreinit(d *daemon) error {
	dirs := storageDirs(d)
	if len(dirs) == 0 {
		return invalidConfig("No storage target directories defined")
	}
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			return invalidConfig("Path to storage target directory must be absolute: %s", dir)
		}
		if !d.conf.bool("storeAllowFirstRunInit") && !exists(filepath.Join(dir, "format.conf")) {
			return invalidConfig("Found uninitialized storage target directory and initialization has been disabled: %s", dir)
		}
		if !d.lockDir(dir) {
			return invalidConfig("Invalid storage directory: locking failed")
		}
	}
	return nil
}

// storageCheckUUIDs is checkTargetsUUIDs: the lists, empty elements dropped,
// compared pair by pair; an empty storeFsUUID is no check at all.
func storageCheckUUIDs(d *daemon) error {
	dirs, uuids := storageDirs(d), d.conf.list("storeFsUUID")
	if len(uuids) == 0 {
		d.log.warningf("App", "UUIDs of targets underlying file systems have not been configured and will therefore not be checked. "+
			"To prevent starting the server accidentally with the wrong data, it is strongly recommended to set the storeFsUUID config parameter to the appropriate UUIDs.")
		return nil
	}
	if len(dirs) != len(uuids) {
		return invalidConfig("Storage path list and storage UUID list have different sizes")
	}
	for i, dir := range dirs {
		have, err := fsUUID(dir)
		if err != nil {
			return err
		}
		if have != uuids[i] {
			return invalidConfig("UUID of the file system under the storage target %s (%s) does not match the one configured (%s)", dir, have, uuids[i])
		}
	}
	return nil
}

// storageInitStorage is prepareTargetDir for each target: format.conf
// (version 3), chunks/ and buddymir/, and the target's string ID.
func storageInitStorage(d *daemon) error {
	for _, dir := range storageDirs(d) {
		if err := checkFormatVersion(dir, 2, 3); err != nil {
			return err
		}
		if err := writeFormatFile(dir, "version=3"); err != nil {
			return invalidConfig("Unable to create format file in: %s", dir)
		}
		for _, sub := range []string{"chunks", "buddymir"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				return invalidConfig("Unable to create directory: %s", filepath.Join(dir, sub))
			}
		}
		t := heartbeatTarget{Path: dir}
		id, err := readOrCreate(filepath.Join(dir, "targetID"), func() string { return generateFileID(d.nodeID) })
		if err != nil {
			return invalidConfig("Unable to create target ID file: %s", filepath.Join(dir, "targetID"))
		}
		t.StringID = id
		if num, err := os.ReadFile(filepath.Join(dir, "targetNumID")); err == nil {
			n, err := strconv.ParseUint(strings.TrimSpace(string(num)), 10, 16)
			if err != nil {
				return invalidConfig("Invalid numeric target ID in file: %s", filepath.Join(dir, "targetNumID"))
			}
			t.TargetID = uint32(n)
		}
		d.targets = append(d.targets, t)
	}
	return nil
}

func storagePrepare(d *daemon, hb *heartbeat) error {
	hb.Targets = make([]heartbeatTarget, len(d.targets))
	for i, t := range d.targets {
		var st syscall.Statfs_t
		if syscall.Statfs(t.Path, &st) == nil {
			t.SpaceTotal = st.Blocks * uint64(st.Bsize)
			t.SpaceFree = st.Bavail * uint64(st.Bsize)
		}
		hb.Targets[i] = t
	}
	return nil
}

// storageRecord writes targetNumID for each target the management service
// numbered, as preregisterTargets does.
func storageRecord(d *daemon, rep heartbeatReply) error {
	for i, t := range d.targets {
		for _, got := range rep.Targets {
			if got.StringID != t.StringID && got.Path != t.Path {
				continue
			}
			if t.TargetID == 0 && got.TargetID != 0 {
				p := filepath.Join(t.Path, "targetNumID")
				if err := os.WriteFile(p, []byte(strconv.FormatUint(uint64(got.TargetID), 10)+"\n"), 0o644); err != nil {
					return invalidConfig("Unable to create file for numeric target ID: %s", p)
				}
				d.targets[i].TargetID = got.TargetID
			}
		}
		if d.targets[i].TargetID == 0 {
			return invalidConfig("Target pre-registration at management node failed")
		}
	}
	return nil
}

// storageHandle answers a mount's question for the targets' free space.
func storageHandle(d *daemon, req request) (any, error) {
	if req.Msg != msgStatfs {
		return nil, errors.New("unknown message " + req.Msg)
	}
	var hb heartbeat
	if err := storagePrepare(d, &hb); err != nil {
		return nil, err
	}
	return map[string]any{"targets": hb.Targets}, nil
}
