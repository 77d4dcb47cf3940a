package beegfs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// StoragePackage is the Debian package of the storage service.
const StoragePackage = "beegfs-storage"

// StorageHost is what a storage target needs to know about its host, read
// in one round trip by ReadStorageHost.
type StorageHost struct {
	Version string // installed beegfs-storage; "" when not installed
	Service ServiceState
	Conf    FileState
	DropIn  FileState
	// RequiredMounts are the mountpoints beegfs-storage's drop-ins other
	// than the targets' own require: an admin's, as the guide's storage.conf.
	RequiredMounts []string
	Mount          Mount
	Dir            DirState
}

// StorageDropIn is the target's RequiresMountsFor drop-in. It is named
// after the target, not the guide's single storage.conf, because a host
// with two targets on two filesystems needs both mounts, and systemd adds
// up RequiresMountsFor across drop-ins.
func StorageDropIn(targetID int64, mountpoint string) (transport.File, error) {
	if err := ValidateNumID("target_id", targetID); err != nil {
		return transport.File{}, err
	}
	return RequiresMountsDropIn(ServiceStorage, "target-"+strconv.FormatInt(targetID, 10), mountpoint)
}

// WriteStorageDropIn writes the target's drop-in for mountpoint, creating its
// directory, unless the admin's own drop-ins (the guide's storage.conf) guard it.
func WriteStorageDropIn(ctx context.Context, w transport.FileWriter, ex transport.Executor, h StorageHost, targetID int64, mountpoint string) (changed bool, err error) {
	if GuardedByHand(h.DropIn, h.RequiredMounts, mountpoint) {
		return false, nil
	}
	f, err := StorageDropIn(targetID, mountpoint)
	if err != nil {
		return false, err
	}
	return WriteDropIn(ctx, w, ex, f)
}

// StorageDropInPath is where StorageDropIn writes, known without a mountpoint.
func StorageDropInPath(targetID int64) string {
	return SystemdUnitDir + "/" + ServiceStorage + ".service.d/target-" + strconv.FormatInt(targetID, 10) + ".conf"
}

// ReadStorageHost reads the package, the service, beegfs-storage.conf, the
// target's drop-in, the filesystem holding dir and dir's ID files. A zero
// targetID (an import, before the IDs are known) skips the drop-in.
func ReadStorageHost(ctx context.Context, ex transport.Executor, dir string, targetID int64) (StorageHost, error) {
	q := HostQuery{
		Packages: []string{StoragePackage},
		Services: []string{ServiceStorage},
		Files:    []string{StorageConfPath},
		Mounts:   []string{dir},
		Dirs:     []string{dir},
		// An admin's drop-in under another name guards the target as well.
		DropInMounts: []string{ServiceStorage},
	}
	dropIn := StorageDropInPath(targetID)
	if targetID != 0 {
		q.Files = append(q.Files, dropIn)
	}
	st, err := ReadHost(ctx, ex, q)
	if err != nil {
		return StorageHost{}, err
	}
	return StorageHost{
		Version:        st.Packages[StoragePackage],
		Service:        st.Services[ServiceStorage],
		Conf:           st.Files[StorageConfPath],
		DropIn:         st.Files[dropIn],
		RequiredMounts: st.RequiredMounts[ServiceStorage],
		Mount:          st.Mounts[dir],
		Dir:            st.Dirs[dir],
	}, nil
}

// ReadTargetDirs reads the ID files of the other targets a host's config
// lists; only a host with more than one target needs this second trip.
func ReadTargetDirs(ctx context.Context, ex transport.Executor, dirs []string) (map[string]DirState, error) {
	if len(dirs) == 0 {
		return map[string]DirState{}, nil
	}
	st, err := ReadHost(ctx, ex, HostQuery{Dirs: dirs})
	if err != nil {
		return nil, err
	}
	return st.Dirs, nil
}

// Release gates on the installed version; a missing package says which.
func (h StorageHost) Release() (Release, error) {
	if h.Version == "" {
		return Release{}, fmt.Errorf("package %s is not installed", StoragePackage)
	}
	return ParseRelease(h.Version)
}

// ParseConf reads beegfs-storage.conf; a missing file is an error, since
// the package ships it and the setup script refuses to run without it.
func (h StorageHost) ParseConf() (*Conf, error) {
	if !h.Conf.Exists {
		return nil, fmt.Errorf("%s does not exist; it is shipped by the %s package", StorageConfPath, StoragePackage)
	}
	c, err := ParseConf(h.Conf.Content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", StorageConfPath, err)
	}
	return c, nil
}

// DirIDs reads the node and target IDs a storage directory's files hold.
func DirIDs(dir string, d DirState) (nodeNumID, targetID int64, err error) {
	if d.NodeNumID == nil || d.TargetNumID == nil {
		return 0, 0, fmt.Errorf("%s is not an initialised storage target (no %s or %s)", dir, NodeNumIDFile, TargetNumIDFile)
	}
	node, err := ParseNumID(dir+"/"+NodeNumIDFile, d.NodeNumID)
	if err != nil {
		return 0, 0, err
	}
	target, err := ParseNumID(dir+"/"+TargetNumIDFile, d.TargetNumID)
	if err != nil {
		return 0, 0, err
	}
	return int64(node), int64(target), nil
}

// CheckDirIDs compares an initialised directory's IDs with the wanted ones
// and names both when they differ: such a directory is another target, and
// running the setup again is refused by the script and by this provider.
func CheckDirIDs(want TargetIdentity, d DirState) error {
	node, target, err := DirIDs(want.Directory, d)
	if err != nil {
		return err
	}
	var diffs []string
	if node != want.NodeNumID {
		diffs = append(diffs, fmt.Sprintf("%s/%s holds %d, but node_num_id is %d", want.Directory, NodeNumIDFile, node, want.NodeNumID))
	}
	if target != want.TargetID {
		diffs = append(diffs, fmt.Sprintf("%s/%s holds %d, but target_id is %d", want.Directory, TargetNumIDFile, target, want.TargetID))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s is already initialised as another target: %s", want.Directory, strings.Join(diffs, "; "))
	}
	return nil
}

// CheckAwaitedIDs refuses a directory set up without -s whose targetNumID, from -i, is not
// the wanted target ID; without one, nothing on disk names an ID yet.
func CheckAwaitedIDs(want TargetIdentity, d DirState) error {
	if d.TargetNumID == nil {
		return nil
	}
	target, err := ParseNumID(want.Directory+"/"+TargetNumIDFile, d.TargetNumID)
	if err != nil {
		return err
	}
	if int64(target) != want.TargetID {
		return fmt.Errorf("%s was set up as target %d (%s), but target_id is %d", want.Directory, target, TargetNumIDFile, want.TargetID)
	}
	return nil
}

// HostTargets are the other targets a host's config lists, with the IDs
// their directories hold. A listed directory that is missing or
// uninitialised has no IDs to conflict with and is left out.
func HostTargets(host, self string, listed []StorageTarget, dirs map[string]DirState) []TargetIdentity {
	var out []TargetIdentity
	for _, t := range listed {
		if t.Directory == self {
			continue
		}
		node, target, err := DirIDs(t.Directory, dirs[t.Directory])
		if err != nil {
			continue
		}
		out = append(out, TargetIdentity{Host: host, Directory: t.Directory, NodeNumID: node, TargetID: target})
	}
	return out
}

// OtherDirectories are the directories a config lists besides self.
func OtherDirectories(listed []StorageTarget, self string) []string {
	var out []string
	for _, t := range listed {
		if t.Directory != self {
			out = append(out, t.Directory)
		}
	}
	return out
}

// FilesystemMissing explains a target whose filesystem is not where it was:
// the guide's array that failed to assemble. It quotes the guide's
// troubleshooting advice, including the warning not to work around it.
func FilesystemMissing(dir, wantMountpoint, wantUUID string, now Mount) error {
	// The guide words its troubleshooting entry for /data; the advice names the
	// mountpoint at hand, so it fits /beegfs on the controller as well.
	return fmt.Errorf("the filesystem of %s (mounted at %s, UUID %s) is missing: %s is now on %s (UUID %q). "+
		"Nothing was initialised there. Check cat /proc/mdstat and findmnt %s, and fix the mount. As %s %s",
		dir, wantMountpoint, wantUUID, now.Path, now.Target, now.UUID, wantMountpoint, guideRefusesStart, guideNoFirstRunInit)
}

// OnRecordedFilesystem reports whether dir is still on the filesystem the
// target was set up on. An empty record (a target not yet recorded) has
// nothing to compare.
func OnRecordedFilesystem(now Mount, wantMountpoint, wantUUID string) bool {
	if wantMountpoint != "" && now.Target != wantMountpoint {
		return false
	}
	return wantUUID == "" || now.UUID == wantUUID
}

// StorageWant is what a target's host should show.
type StorageWant struct {
	Target     TargetIdentity
	Mgmtd      string
	Mountpoint string
	FsUUID     string
	// CheckFsUUID: storeFsUUID must name FsUUID for the target. Without it
	// the target may also be listed with no UUID, which the daemon does not
	// check (beegfs-setup-storage -u).
	CheckFsUUID bool
}

// StorageDrift lists, in the admin's terms, how a set-up target's host
// differs from what it should be. An empty list means in sync.
func StorageDrift(h StorageHost, w StorageWant) []string {
	var problems []string
	if h.Version == "" {
		problems = append(problems, StoragePackage+" is not installed")
	}
	if !OnRecordedFilesystem(h.Mount, w.Mountpoint, w.FsUUID) {
		problems = append(problems, fmt.Sprintf("filesystem missing: %s is on %s (UUID %q), not on %s (UUID %s)",
			w.Target.Directory, h.Mount.Target, h.Mount.UUID, w.Mountpoint, w.FsUUID))
	}
	if h.Dir.Initialised() {
		if err := CheckDirIDs(w.Target, h.Dir); err != nil {
			problems = append(problems, err.Error())
		}
	} else {
		problems = append(problems, w.Target.Directory+" is not an initialised target")
	}
	problems = append(problems, confDrift(h, w)...)
	if want, err := StorageDropIn(w.Target.TargetID, w.Mountpoint); err == nil && !DropInGuards(h.DropIn, want, h.RequiredMounts, w.Mountpoint) {
		problems = append(problems, "drop-in "+want.Path+" is missing or changed")
	}
	if !h.Service.Running() {
		problems = append(problems, ServiceStorage+" is "+h.Service.Active)
	}
	if !h.Service.IsEnabled() {
		problems = append(problems, ServiceStorage+" is "+h.Service.Enabled+", not enabled")
	}
	return problems
}

func confDrift(h StorageHost, w StorageWant) []string {
	c, err := h.ParseConf()
	if err != nil {
		return []string{err.Error()}
	}
	t, err := CheckStorageInterlock(c, w.Target.Directory)
	if err != nil {
		return []string{"interlock: " + err.Error()}
	}
	if t.FsUUID != w.FsUUID && (w.CheckFsUUID || t.FsUUID != "") {
		return []string{fmt.Sprintf("interlock: %s for %s is %q, want %s", KeyFsUUID, t.Directory, t.FsUUID, w.FsUUID)}
	}
	return nil
}

// ListsUnchecked reports whether the config lists dir without a UUID
// (beegfs-setup-storage -u): a target the daemon does not check, and which
// the provider adopts as it is unless asked to. A config that cannot be read
// gives false: the guide's check.
func (h StorageHost) ListsUnchecked(dir string) bool {
	c, err := h.ParseConf()
	if err != nil {
		return false
	}
	listed, err := StorageTargets(c)
	if err != nil {
		return false
	}
	for _, t := range listed {
		if t.Directory == dir {
			return t.FsUUID == ""
		}
	}
	return false
}

// InterlockConf is beegfs-storage.conf with the target in dir as the
// provider keeps it: with the UUID of the filesystem mounted there when
// check is set, else with whatever UUID the file lists for dir (none for a
// directory set up with -u). Keys that already say so keep their form.
func (h StorageHost) InterlockConf(dir string, check bool) (*Conf, error) {
	c, err := h.ParseConf()
	if err != nil {
		return nil, err
	}
	t := StorageTarget{Directory: dir, FsUUID: h.Mount.UUID}
	if !check {
		listed, err := StorageTargets(c)
		if err != nil {
			return nil, fmt.Errorf("refusing to edit %s: %w", StorageConfPath, err)
		}
		t.FsUUID = ""
		for _, l := range listed {
			if l.Directory == dir {
				t.FsUUID = l.FsUUID
			}
		}
	}
	if err := SetStorageTarget(c, t); err != nil {
		return nil, err
	}
	return c, nil
}

// MgmtdHost is the management host beegfs-storage.conf names.
func (h StorageHost) MgmtdHost() string {
	c, err := h.ParseConf()
	if err != nil {
		return ""
	}
	v, _ := c.Get(KeyMgmtdHost)
	return v
}

// SetupStorage runs beegfs-setup-storage and sorts its outcome. The caller
// runs it only on a missing or empty directory, and treats
// AlreadyInitialised as "read the IDs again", never as success.
func SetupStorage(ctx context.Context, ex transport.Executor, s StorageSetup) (Outcome, error) {
	cmd, err := SetupStorageCommand(s)
	if err != nil {
		return Failed, err
	}
	res, runErr := ex.Sudo(ctx, transport.ScriptEnv+cmd+"\n", nil)
	return setupOutcome(ctx, ex, cmd, SetupStorageTool, res, runErr)
}

// RemoveStorageTarget takes dir out of both aligned lists. A list that
// changes is written in the guide's form, with its leading empty element;
// one that does not (no UUIDs listed) stays as it was.
func RemoveStorageTarget(c *Conf, dir string) (removed bool, err error) {
	targets, err := StorageTargets(c)
	if err != nil {
		return false, fmt.Errorf("refusing to edit %s: %w", StorageConfPath, err)
	}
	var dirs, uuids []string
	for _, t := range targets {
		if t.Directory == dir {
			removed = true
			continue
		}
		dirs = append(dirs, t.Directory)
		if t.FsUUID != "" {
			uuids = append(uuids, t.FsUUID)
		}
	}
	if !removed {
		return false, nil
	}
	if err := setTargetList(c, KeyStorageDirectory, dirs); err != nil {
		return false, err
	}
	return true, setTargetList(c, KeyFsUUID, uuids)
}

// TargetRemoval is a host's beegfs-storage.conf with one target taken out,
// and what that leaves for the service.
type TargetRemoval struct {
	Conf *Conf // the edited config; nil when the host has none
	// Listed reports whether the config listed the target, so that Conf
	// differs from the file.
	Listed bool
	// Remaining counts the targets the edited config still lists.
	Remaining int
}

// RemoveTarget takes dir out of the host's aligned lists (as
// RemoveStorageTarget). A host without the config (the package removed by
// hand) lists nothing.
func (h StorageHost) RemoveTarget(dir string) (TargetRemoval, error) {
	if !h.Conf.Exists {
		return TargetRemoval{}, nil
	}
	c, err := h.ParseConf()
	if err != nil {
		return TargetRemoval{}, err
	}
	listed, err := RemoveStorageTarget(c, dir)
	if err != nil {
		return TargetRemoval{}, err
	}
	left, err := StorageTargets(c)
	if err != nil {
		return TargetRemoval{}, fmt.Errorf("%s after removing %s: %w", StorageConfPath, dir, err)
	}
	return TargetRemoval{Conf: c, Listed: listed, Remaining: len(left)}, nil
}

// ServiceAction is what beegfs-storage needs once a target is removed.
type ServiceAction int

const (
	// KeepService: the service never had the target, or is not running.
	KeepService ServiceAction = iota
	// RestartService: other targets remain, and the running service still
	// serves the removed one until it reads its config again.
	RestartService
	// DisableService: no target is left for the service.
	DisableService
)

// ServiceAfter decides the service's fate: stopped and disabled only when
// no target is left, so that the host's other targets stay online.
// dropInRemoved says whether the target's drop-in was there to remove.
func (r TargetRemoval) ServiceAfter(svc ServiceState, dropInRemoved bool) ServiceAction {
	switch {
	case r.Remaining == 0 && svc.Enabled != "not-found":
		return DisableService
	case r.Remaining > 0 && svc.Running() && (r.Listed || dropInRemoved):
		return RestartService
	default:
		return KeepService
	}
}

// CheckWipe allows force_destroy_data to delete only what is provably this
// target: a directory holding its IDs, an empty one, or none. A non-empty
// directory without ID files may be anybody's data.
func CheckWipe(want TargetIdentity, d DirState) error {
	switch {
	case !d.Exists || d.Empty:
		return nil
	case d.NodeNumID != nil || d.TargetNumID != nil:
		return CheckDirIDs(want, d)
	default:
		return fmt.Errorf("%s holds files but no %s or %s, so nothing shows they are target %d's",
			want.Directory, NodeNumIDFile, TargetNumIDFile, want.TargetID)
	}
}

// WipeTarget deletes a target directory and everything in it. It is the
// unrecoverable part of force_destroy_data; the caller has stopped the
// service and checked the directory's IDs first.
func WipeTarget(ctx context.Context, ex transport.Executor, dir string) error {
	if err := ValidatePath(dir); err != nil {
		return err
	}
	if _, err := ex.Sudo(ctx, transport.ScriptEnv+"rm -rf -- "+transport.Quote(dir)+"\n", nil); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	transport.Changed(ctx, ex, "wiped "+dir)
	return nil
}

// ConflictAttribute names the setting a CheckIDConflicts refusal of c is
// about: target_id when another target has its target ID, else node_num_id.
func ConflictAttribute(existing []TargetIdentity, c TargetIdentity) string {
	for _, e := range existing {
		if (e.Host != c.Host || e.Directory != c.Directory) && e.TargetID == c.TargetID {
			return "target_id"
		}
	}
	return "node_num_id"
}

// chunkDirs are where a storage target keeps file contents: chunks/, and buddymir/ for
// mirrored files.
var chunkDirs = []string{"chunks", "buddymir"}

// HoldsChunks reports whether the target in dir holds file chunks: files on BeeGFS whose
// contents, or part of them, live only there.
func HoldsChunks(ctx context.Context, ex transport.Executor, dir string) (bool, error) {
	if !strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") {
		return false, fmt.Errorf("target directory %q: want an absolute path", dir)
	}
	var paths []string
	for _, d := range chunkDirs {
		paths = append(paths, transport.Quote(dir+"/"+d))
	}
	script := transport.ScriptEnv + "for d in " + strings.Join(paths, " ") + "; do [ -d \"$d\" ] && find \"$d\" -type f -print -quit; done; exit 0\n"
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return false, fmt.Errorf("look for file chunks in %s: %w", dir, err)
	}
	return strings.TrimSpace(string(res.Stdout)) != "", nil
}
