package beegfs

import (
	"fmt"
	"path"
	"regexp"
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
	guideLeadingComma = `the guide: "The leading comma in the storage config is not a typo. ` +
		`storeStorageDirectory and storeFsUUID are comma-separated lists (one entry per target), ` +
		`and beegfs-setup-storage writes storeStorageDirectory with an empty first element. ` +
		`Keep the two lists aligned."`
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

// StorageTarget is one storage directory and the filesystem it must be on.
type StorageTarget struct {
	Directory string
	FsUUID    string
}

// StorageTargets reads the aligned lists of a beegfs-storage.conf. A missing
// or misaligned pair is an error naming the mismatch, never a guess.
func StorageTargets(c *Conf) ([]StorageTarget, error) {
	dirValue, _ := c.Get(KeyStorageDirectory)
	uuidValue, _ := c.Get(KeyFsUUID)
	return alignedTargets(dirValue, uuidValue)
}

func alignedTargets(dirValue, uuidValue string) ([]StorageTarget, error) {
	dirs, err := splitTargetList(KeyStorageDirectory, dirValue)
	if err != nil {
		return nil, err
	}
	uuids, err := splitTargetList(KeyFsUUID, uuidValue)
	if err != nil {
		return nil, err
	}
	if len(dirs) != len(uuids) {
		return nil, fmt.Errorf("%s lists %d directories %v but %s lists %d UUIDs %v; %s",
			KeyStorageDirectory, len(dirs), dirs, KeyFsUUID, len(uuids), uuids, guideLeadingComma)
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			return nil, fmt.Errorf("%s lists %s twice; %s", KeyStorageDirectory, d, guideLeadingComma)
		}
		seen[d] = true
	}
	targets := make([]StorageTarget, len(dirs))
	for i := range dirs {
		targets[i] = StorageTarget{Directory: dirs[i], FsUUID: uuids[i]}
	}
	return targets, nil
}

// splitTargetList splits a storage list. An empty value is an empty list;
// anything else must start with the empty element beegfs-setup-storage
// writes (pitfall P12), and have no other empty element, which would shift
// every later entry against its partner list.
func splitTargetList(key, value string) ([]string, error) {
	if value == "" {
		return nil, nil
	}
	parts := strings.Split(value, ",")
	if strings.TrimSpace(parts[0]) != "" {
		return nil, fmt.Errorf("%s = %s lacks the leading empty element; %s", key, value, guideLeadingComma)
	}
	entries := make([]string, 0, len(parts)-1)
	for i, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%s = %s has an empty entry at position %d; %s", key, value, i+1, guideLeadingComma)
		}
		entries = append(entries, p)
	}
	return entries, nil
}

func joinTargetList(entries []string) string {
	if len(entries) == 0 {
		return ""
	}
	return "," + strings.Join(entries, ",")
}

// SetStorageTarget puts one target into a beegfs-storage.conf with the
// interlock: its UUID replaced when the directory is listed, both lists
// extended when it is not, and storeAllowFirstRunInit = false. The lists
// must be aligned before; a misaligned file is for the admin to repair.
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
	uuids := make([]string, len(targets))
	for i, target := range targets {
		dirs[i], uuids[i] = target.Directory, target.FsUUID
	}
	for _, kv := range [][2]string{
		{KeyAllowFirstRunInit, "false"},
		{KeyStorageDirectory, joinTargetList(dirs)},
		{KeyFsUUID, joinTargetList(uuids)},
	} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

func validateStorageTarget(t StorageTarget) error {
	if err := ValidatePath(t.Directory); err != nil {
		return err
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
// single value and storeAllowFirstRunInit = false. A config already naming
// another directory is refused: switching it would point the daemon at a
// different, possibly empty, metadata store.
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
		if err := c.Set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// CheckMetaInterlock verifies a beegfs-meta.conf and returns its directory
// and UUID. A comma, leading or not, is refused: it is the storage form, and
// the metadata daemon would compare the whole string.
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
// comparison is exact: how the daemon compares is not confirmed, and an
// exact match is the reading that cannot pass a config the daemon refuses.
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
