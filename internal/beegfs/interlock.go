package beegfs

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Config keys of the interlock (confirmed: the constants of
// beegfs-setup-storage and beegfs-setup-meta).
const (
	KeyAllowFirstRunInit = "storeAllowFirstRunInit"
	KeyFsUUID            = "storeFsUUID"
	KeyStorageDirectory  = "storeStorageDirectory"
	KeyMetaDirectory     = "storeMetaDirectory"
	KeyMgmtdHost         = "sysMgmtdHost"
)

// The guide's own words, quoted in refusals so the admin meets the reason
// where the provider stops.
const (
	guideAlignedLists = `the guide: "storeStorageDirectory and storeFsUUID are comma-separated lists ` +
		`(one entry per target) [...] Keep the two lists aligned."`
	guideMetaSingle     = `the guide: "The metadata config takes a single value with no comma."`
	guideNoFirstRunInit = `the guide: "Do not set storeAllowFirstRunInit = true to make the error go away: ` +
		`that creates a new, empty target."`
	guideRefusesStart = `the guide: "The storage service refuses to start after a reboot. ` +
		`That is the interlock working. The RAID array most likely did not assemble, ` +
		`so /data is not the filesystem named in storeFsUUID."`
	guideRootFS = `the guide: "Suppose a RAID array fails to assemble at boot. /data is then just ` +
		`an empty directory on the root filesystem. By default, beegfs-storage will happily ` +
		`initialize a brand-new empty target there and join the cluster with it."`
)

// fsUUIDPattern accepts what blkid reports as UUID: the dashed 128-bit form
// of ext4 and XFS, and the short hex forms of vfat and NTFS. A comma or blank
// would break the lists, so neither is accepted.
var fsUUIDPattern = regexp.MustCompile(`^[0-9A-Fa-f]{4,}(-[0-9A-Fa-f]{4,})*$`)

// StorageTarget is one storage directory and the filesystem it must be on;
// an empty FsUUID is no check, as the daemon skips it.
type StorageTarget struct {
	Directory string
	FsUUID    string
}

// StorageTargets reads the lists of a beegfs-storage.conf as the daemon
// does: an empty storeFsUUID checks no target, any other must name one UUID
// per directory. Lists of different lengths are an error naming both, never
// a guess.
func StorageTargets(c *Conf) ([]StorageTarget, error) {
	dirValue, _ := c.Get(KeyStorageDirectory)
	uuidValue, _ := c.Get(KeyFsUUID)
	return alignedTargets(dirValue, uuidValue)
}

func alignedTargets(dirValue, uuidValue string) ([]StorageTarget, error) {
	dirs, uuids := splitTargetList(dirValue), splitTargetList(uuidValue)
	if len(uuids) > 0 && len(dirs) != len(uuids) {
		// beegfs-storage refuses this: "Storage path list and storage UUID
		// list have different sizes" (storage/source/app/App.cpp, 8.3.1).
		return nil, fmt.Errorf("%s lists %d directories %v but %s lists %d UUIDs %v; %s",
			KeyStorageDirectory, len(dirs), dirs, KeyFsUUID, len(uuids), uuids, guideAlignedLists)
	}
	seen := map[string]bool{}
	targets := make([]StorageTarget, 0, len(dirs))
	for i, d := range dirs {
		if seen[d] {
			return nil, fmt.Errorf("%s lists %s twice", KeyStorageDirectory, d)
		}
		seen[d] = true
		t := StorageTarget{Directory: d}
		if len(uuids) > 0 {
			t.FsUUID = uuids[i]
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return nil, nil
	}
	return targets, nil
}

// splitTargetList splits a storage list as the daemon does (confirmed:
// storage/source/app/config/Config.cpp, 8.3.1): entries trimmed and empty ones
// dropped. So the list with the leading empty element beegfs-setup-storage
// writes (",/data/a") and the bare path its -r option writes ("/data/a")
// read alike.
func splitTargetList(value string) []string {
	var entries []string
	for _, p := range strings.Split(value, ",") {
		if p = strings.TrimSpace(p); p != "" {
			entries = append(entries, p)
		}
	}
	return entries
}

// joinTargetList writes a list in the guide's form, with its leading empty element.
func joinTargetList(entries []string) string {
	if len(entries) == 0 {
		return ""
	}
	return "," + strings.Join(entries, ",")
}

// setTargetList sets a list only when its entries change, so that a file in
// the -r form, or with the setup script's " ," separators, stays as written.
func setTargetList(c *Conf, key string, entries []string) error {
	current, _ := c.Get(key)
	if slices.Equal(splitTargetList(current), entries) {
		return nil
	}
	return c.Set(key, joinTargetList(entries))
}

// setIfDifferent sets key only when its value changes, keeping the line's blanks.
func setIfDifferent(c *Conf, key, value string) error {
	if current, ok := c.Get(key); ok && current == value {
		return nil
	}
	return c.Set(key, value)
}

// SetStorageTarget puts one target into a beegfs-storage.conf with
// storeAllowFirstRunInit = false: its UUID replaced when the directory is
// listed, both lists extended when it is not. An empty t.FsUUID lists the
// target without a check. The daemon checks every target or none, so a UUID
// for some targets but not for others is refused, as is a misaligned file:
// that is for the admin to repair.
func SetStorageTarget(c *Conf, t StorageTarget) error {
	if err := validateStorageTarget(t); err != nil {
		return err
	}
	targets, err := StorageTargets(c)
	if err != nil {
		return fmt.Errorf("refusing to edit %s: %w", StorageConfPath, err)
	}
	replaced := false
	for i := range targets {
		if targets[i].Directory == t.Directory {
			targets[i].FsUUID = t.FsUUID
			replaced = true
		}
	}
	if !replaced {
		targets = append(targets, t)
	}
	dirs := make([]string, len(targets))
	var uuids, unchecked []string
	for i, target := range targets {
		dirs[i] = target.Directory
		if target.FsUUID == "" {
			unchecked = append(unchecked, target.Directory)
		} else {
			uuids = append(uuids, target.FsUUID)
		}
	}
	if len(uuids) > 0 && len(unchecked) > 0 {
		return fmt.Errorf("refusing to edit %s: %s would name a UUID for some targets but none for %s, and beegfs-storage checks every target or none; %s",
			StorageConfPath, KeyFsUUID, strings.Join(unchecked, ", "), guideAlignedLists)
	}
	if err := setIfDifferent(c, KeyAllowFirstRunInit, "false"); err != nil {
		return err
	}
	if err := setTargetList(c, KeyStorageDirectory, dirs); err != nil {
		return err
	}
	return setTargetList(c, KeyFsUUID, uuids)
}

func validateStorageTarget(t StorageTarget) error {
	if err := ValidatePath(t.Directory); err != nil {
		return err
	}
	if t.FsUUID == "" {
		return nil
	}
	return ValidateFsUUID(t.FsUUID)
}

// ValidatePath accepts a clean absolute path, of a directory or a file, that
// can stand in a comma-separated list, in a sed replacement the setup scripts build from it
// ('&' there means the matched text) and in a systemd unit ('%' starts a
// specifier): no comma, blank, '|', '&', '%', backslash or line break.
func ValidatePath(p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
		return fmt.Errorf("%q must be a clean absolute path below /", p)
	}
	if strings.ContainsAny(p, ", \t\n\r|&%\\\x00") {
		return fmt.Errorf("%q must not contain a comma, blank, '|', '&', '%%' or backslash", p)
	}
	return nil
}

// ValidateFsUUID accepts a filesystem UUID as blkid prints it.
func ValidateFsUUID(uuid string) error {
	if !fsUUIDPattern.MatchString(uuid) {
		return fmt.Errorf("%q is not a filesystem UUID as blkid reports it", uuid)
	}
	return nil
}

// CheckStorageInterlock verifies a beegfs-storage.conf: first-run init off
// and the lists aligned, with dir among them.
func CheckStorageInterlock(c *Conf, dir string) (StorageTarget, error) {
	if err := checkFirstRunInitOff(c); err != nil {
		return StorageTarget{}, err
	}
	targets, err := StorageTargets(c)
	if err != nil {
		return StorageTarget{}, err
	}
	for _, t := range targets {
		if t.Directory == dir {
			return t, nil
		}
	}
	return StorageTarget{}, fmt.Errorf("%s does not list %s", KeyStorageDirectory, dir)
}

func checkFirstRunInitOff(c *Conf) error {
	v, ok := c.Get(KeyAllowFirstRunInit)
	if !ok || v != "false" {
		// BeeGFS's default is true (confirmed: the shipped config file),
		// so a missing key is as unsafe as "true".
		return fmt.Errorf("%s is %q, want \"false\"; %s", KeyAllowFirstRunInit, v, guideNoFirstRunInit)
	}
	return nil
}

// SetMetaInterlock sets a beegfs-meta.conf's directory, storeFsUUID as a
// single value (empty: no check) and storeAllowFirstRunInit = false, each
// only where it changes. A config already naming another directory is
// refused: switching it would point the daemon at a different, possibly
// empty, metadata store.
func SetMetaInterlock(c *Conf, t StorageTarget) error {
	if err := validateStorageTarget(t); err != nil {
		return err
	}
	if current, _ := c.Get(KeyMetaDirectory); current != "" && current != t.Directory {
		return fmt.Errorf("%s already names %s, not %s; refusing to switch the metadata store", KeyMetaDirectory, current, t.Directory)
	}
	for _, kv := range [][2]string{
		{KeyAllowFirstRunInit, "false"},
		{KeyMetaDirectory, t.Directory},
		{KeyFsUUID, t.FsUUID},
	} {
		if err := setIfDifferent(c, kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// CheckMetaInterlock verifies a beegfs-meta.conf and returns its directory
// and UUID, "" when storeFsUUID is empty (beegfs-setup-meta -u), which the
// daemon does not check. A comma, leading or not, is refused: it is the
// storage form, and the metadata daemon would compare the whole string.
func CheckMetaInterlock(c *Conf) (StorageTarget, error) {
	if err := checkFirstRunInitOff(c); err != nil {
		return StorageTarget{}, err
	}
	dir, _ := c.Get(KeyMetaDirectory)
	uuid, _ := c.Get(KeyFsUUID)
	if strings.Contains(uuid, ",") {
		return StorageTarget{}, fmt.Errorf("%s = %s in %s is a list; %s", KeyFsUUID, uuid, MetaConfPath, guideMetaSingle)
	}
	if strings.Contains(dir, ",") {
		return StorageTarget{}, fmt.Errorf("%s = %s in %s is a list; %s", KeyMetaDirectory, dir, MetaConfPath, guideMetaSingle)
	}
	t := StorageTarget{Directory: dir, FsUUID: uuid}
	if err := validateStorageTarget(t); err != nil {
		return StorageTarget{}, fmt.Errorf("%s: %w", MetaConfPath, err)
	}
	return t, nil
}

// CheckMountedUUID compares the configured storeFsUUID of a directory with
// the UUID of the filesystem mounted there, as findmnt reports it. The
// comparison is exact, as the daemons compare (confirmed: checkTargetUUID
// and checkTargetsUUIDs in meta's and storage's App.cpp, 8.3.1).
func CheckMountedUUID(t StorageTarget, mountpoint, mountedUUID string) error {
	if mountedUUID == "" {
		return fmt.Errorf("%s is on %s, which reports no filesystem UUID; %s", t.Directory, mountpoint, guideRefusesStart)
	}
	if t.FsUUID == mountedUUID {
		return nil
	}
	if strings.EqualFold(t.FsUUID, mountedUUID) {
		return fmt.Errorf("%s = %s for %s differs from %s, the UUID of the filesystem mounted at %s, in letter case only; write it as blkid prints it",
			KeyFsUUID, t.FsUUID, t.Directory, mountedUUID, mountpoint)
	}
	return fmt.Errorf("%s = %s for %s, but the filesystem mounted at %s has UUID %s; %s",
		KeyFsUUID, t.FsUUID, t.Directory, mountpoint, mountedUUID, guideRefusesStart)
}

// CheckSeparateFilesystem refuses a BeeGFS directory whose filesystem is
// the root filesystem: it would land on the OS disk.
func CheckSeparateFilesystem(dir, mountpoint string) error {
	if mountpoint == "/" {
		return fmt.Errorf("%s is on the root filesystem, not on a filesystem of its own; %s", dir, guideRootFS)
	}
	if mountpoint != dir && !strings.HasPrefix(dir, strings.TrimSuffix(mountpoint, "/")+"/") {
		return fmt.Errorf("%s is not below its reported mountpoint %s", dir, mountpoint)
	}
	return nil
}
