package beegfs

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// MetaDropInPath holds RequiresMountsFor for beegfs-meta.
const (
	MetaDropInPath = SystemdUnitDir + "/" + ServiceMeta + ".service.d/" + metaDropInName + ".conf"
	metaDropInName = "meta"
)

// MetaHost is a metadata service and its directory as one ReadHost found them.
type MetaHost struct {
	PackageVersion string
	Service        ServiceState
	Config         FileState
	DropIn         FileState
	// RequiredMounts are the mountpoints all of beegfs-meta's drop-ins require.
	RequiredMounts []string
	// Mount is the filesystem holding the directory (or its nearest
	// existing ancestor before it is created).
	Mount Mount
	Dir   DirState
}

// ReadMeta reads everything the metadata resource needs in one round trip.
func ReadMeta(ctx context.Context, ex transport.Executor, dir string) (MetaHost, error) {
	if err := ValidatePath(dir); err != nil {
		return MetaHost{}, err
	}
	st, err := ReadHost(ctx, ex, HostQuery{
		Packages:     []string{MetaPackage},
		Services:     []string{ServiceMeta},
		Files:        []string{MetaConfPath, MetaDropInPath},
		Mounts:       []string{dir},
		Dirs:         []string{dir},
		DropInMounts: []string{ServiceMeta},
	})
	if err != nil {
		return MetaHost{}, err
	}
	return MetaHost{
		PackageVersion: st.Packages[MetaPackage],
		Service:        st.Services[ServiceMeta],
		Config:         st.Files[MetaConfPath],
		DropIn:         st.Files[MetaDropInPath],
		RequiredMounts: st.RequiredMounts[ServiceMeta],
		Mount:          st.Mounts[dir],
		Dir:            st.Dirs[dir],
	}, nil
}

// Release gates on the installed beegfs-meta.
func (m MetaHost) Release() (Release, error) {
	return releaseOf(MetaPackage, m.PackageVersion)
}

// Target is the directory and the filesystem it is on now, checked to be a
// filesystem of its own with a UUID the interlock can name.
func (m MetaHost) Target(dir string) (StorageTarget, error) {
	if err := CheckSeparateFilesystem(dir, m.Mount.Target); err != nil {
		return StorageTarget{}, err
	}
	t := StorageTarget{Directory: dir, FsUUID: m.Mount.UUID}
	if err := ValidateFsUUID(t.FsUUID); err != nil {
		return StorageTarget{}, fmt.Errorf("filesystem of %s mounted at %s: %w", dir, m.Mount.Target, err)
	}
	return t, nil
}

// MetaSetupNeeded decides whether beegfs-setup-meta may run: only on a
// missing or empty directory. An initialised one is adopted when its
// nodeNumID is the configured one and refused when it is another; one the
// setup script prepared without -s (format.conf, no nodeNumID) is adopted and
// gets the configured ID; any other non-empty directory is not BeeGFS's and
// is refused.
func MetaSetupNeeded(dir string, d DirState, nodeNumID int64) (bool, error) {
	if !d.Exists || d.Empty {
		return true, nil
	}
	if d.AwaitsIDs() {
		return false, nil
	}
	if !d.Initialised() {
		return false, fmt.Errorf("%s is not empty and holds neither %s nor %s: no BeeGFS setup tool prepared it, and beegfs-setup-meta would refuse it; empty it or choose another path", dir, FormatFile, NodeNumIDFile)
	}
	return false, CheckMetaNodeNumID(dir, d, nodeNumID)
}

// CheckMetaNodeNumID compares an initialised directory's nodeNumID with the
// configured one.
func CheckMetaNodeNumID(dir string, d DirState, nodeNumID int64) error {
	got, err := ParseNumID(NodeNumIDFile, d.NodeNumID)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", dir, NodeNumIDFile, err)
	}
	if int64(got) != nodeNumID {
		return fmt.Errorf("%s was initialised as metadata node %d, not %d; set node_num_id = %d to adopt it, or choose another path", dir, got, nodeNumID, got)
	}
	return nil
}

// SetupMeta runs beegfs-setup-meta. AlreadyInitialised comes back as an
// outcome: the caller re-reads the directory's nodeNumID before accepting it.
func SetupMeta(ctx context.Context, ex transport.Executor, dir string, nodeNumID int64, mgmtd string) (Outcome, error) {
	cmd, err := SetupMetaCommand(dir, nodeNumID, mgmtd)
	if err != nil {
		return Failed, err
	}
	res, runErr := ex.Sudo(ctx, transport.ScriptEnv+cmd+"\n", nil)
	return setupOutcome(ctx, ex, cmd, SetupMetaTool, res, runErr)
}

// ConfigureMeta edits beegfs-meta.conf for the guide's setup: the interlock
// for t, the management host, and the shared secret where none is named.
func ConfigureMeta(r Release, content []byte, t StorageTarget, mgmtd string) (*Conf, error) {
	if err := ValidateMgmtdHost(mgmtd); err != nil {
		return nil, err
	}
	c, err := ParseConf(content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MetaConfPath, err)
	}
	if err := SetMetaInterlock(c, t); err != nil {
		return nil, fmt.Errorf("%s: %w", MetaConfPath, err)
	}
	if err := c.Set(KeyMgmtdHost, mgmtd); err != nil {
		return nil, err
	}
	if v, _ := c.Get(r.Layout().ServerAuthKey); v == "" {
		if err := c.Set(r.Layout().ServerAuthKey, ConnAuthPath); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// MetaDropIn is the drop-in that keeps beegfs-meta from starting before the
// directory's filesystem is mounted.
func MetaDropIn(mountpoint string) (transport.File, error) {
	return RequiresMountsDropIn(ServiceMeta, metaDropInName, mountpoint)
}

// MetaWant is what a set-up metadata service should show: its directory,
// the management host, and the filesystem it was set up on ("" before it
// is recorded, when the filesystem mounted now is compared instead).
type MetaWant struct {
	Dir        string
	Mgmtd      string
	Mountpoint string
	FsUUID     string
	// CheckFsUUID: storeFsUUID must name the filesystem. Without it an empty
	// storeFsUUID (beegfs-setup-meta -u), which the daemon does not check, is
	// in sync too.
	CheckFsUUID bool
}

// MetaProblems lists what differs from a converged metadata service, in
// words for a plan: an empty list means in sync.
func MetaProblems(m MetaHost, r Release, w MetaWant) []string {
	var problems []string
	if !OnRecordedFilesystem(m.Mount, w.Mountpoint, w.FsUUID) {
		problems = append(problems, fmt.Sprintf("filesystem missing: %s is on %s (UUID %q), not on %s (UUID %s)",
			w.Dir, m.Mount.Target, m.Mount.UUID, w.Mountpoint, w.FsUUID))
	}
	c, err := ParseConf(m.Config.Content)
	if err != nil || !m.Config.Exists {
		problems = append(problems, MetaConfPath+" missing or unreadable")
	} else {
		problems = append(problems, metaConfProblems(c, m, r, w)...)
	}
	mountpoint := firstSet(w.Mountpoint, m.Mount.Target)
	if d, err := MetaDropIn(mountpoint); err != nil || !DropInGuards(m.DropIn, d, m.RequiredMounts, mountpoint) {
		problems = append(problems, "drop-in "+MetaDropInPath+" missing or changed")
	}
	return append(problems, daemonProblems(ServiceMeta, m.Service)...)
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func metaConfProblems(c *Conf, m MetaHost, r Release, w MetaWant) []string {
	var problems []string
	t, err := CheckMetaInterlock(c)
	switch {
	case err != nil:
		problems = append(problems, "interlock: "+err.Error())
	case t.Directory != w.Dir:
		problems = append(problems, fmt.Sprintf("%s is %s, want %s", KeyMetaDirectory, t.Directory, w.Dir))
	case t.FsUUID == "":
		if w.CheckFsUUID {
			problems = append(problems, fmt.Sprintf("interlock: %s is empty, want %s", KeyFsUUID, firstSet(w.FsUUID, m.Mount.UUID)))
		}
	default:
		if err := CheckMountedUUID(t, m.Mount.Target, m.Mount.UUID); err != nil {
			problems = append(problems, "interlock: "+err.Error())
		}
	}
	if got, _ := c.Get(KeyMgmtdHost); got != w.Mgmtd {
		problems = append(problems, fmt.Sprintf("%s is %q, want %q", KeyMgmtdHost, got, w.Mgmtd))
	}
	if got, _ := c.Get(r.Layout().ServerAuthKey); got == "" {
		problems = append(problems, r.Layout().ServerAuthKey+" not set")
	}
	return problems
}

// KeptMetaTarget is the interlock an update writes: the directory with the
// UUID it was set up on. storeFsUUID is never moved to another filesystem:
// a mounted filesystem that is not the recorded one, or a storeFsUUID
// naming another, is refused with the guide's advice.
func KeptMetaTarget(m MetaHost, dir, recordedUUID string) (StorageTarget, error) {
	t := StorageTarget{Directory: dir, FsUUID: firstSet(recordedUUID, m.Mount.UUID)}
	if err := CheckMountedUUID(t, m.Mount.Target, m.Mount.UUID); err != nil {
		return StorageTarget{}, err
	}
	c, err := ParseConf(m.Config.Content)
	if err != nil {
		return StorageTarget{}, fmt.Errorf("%s: %w", MetaConfPath, err)
	}
	if got, _ := c.Get(KeyFsUUID); got != "" && got != t.FsUUID {
		return StorageTarget{}, fmt.Errorf("%s: %w", MetaConfPath,
			CheckMountedUUID(StorageTarget{Directory: dir, FsUUID: got}, m.Mount.Target, m.Mount.UUID))
	}
	return t, nil
}

// ListsUnchecked reports whether beegfs-meta.conf names dir, initialised,
// with an empty storeFsUUID (beegfs-setup-meta -u): a store the daemon does
// not check, and which the provider adopts as it is unless asked to.
func (m MetaHost) ListsUnchecked(dir string) bool {
	current, uuid, err := m.ConfiguredMetaStore()
	return err == nil && current == dir && uuid == "" && m.Dir.Initialised()
}

// MetaStore is the metadata store beegfs-meta.conf names, as found on the host.
type MetaStore struct {
	Directory string
	FsUUID    string
	Mount     Mount
	Dir       DirState
}

// ConfiguredMetaStore is the directory and UUID beegfs-meta.conf names, ""
// for a config that names none.
func (m MetaHost) ConfiguredMetaStore() (dir, fsUUID string, err error) {
	c, err := ParseConf(m.Config.Content)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", MetaConfPath, err)
	}
	dir, _ = c.Get(KeyMetaDirectory)
	fsUUID, _ = c.Get(KeyFsUUID)
	return dir, fsUUID, nil
}

// ReadConfiguredMetaStore reads the store beegfs-meta.conf names when that
// is not dir; a config naming dir or nothing gives a zero MetaStore.
func ReadConfiguredMetaStore(ctx context.Context, ex transport.Executor, m MetaHost, dir string) (MetaStore, error) {
	current, fsUUID, err := m.ConfiguredMetaStore()
	if err != nil || current == "" || current == dir {
		return MetaStore{}, err
	}
	if err := ValidatePath(current); err != nil {
		return MetaStore{}, fmt.Errorf("%s = %q in %s: %w", KeyMetaDirectory, current, MetaConfPath, err)
	}
	st, err := ReadHost(ctx, ex, HostQuery{Mounts: []string{current}, Dirs: []string{current}})
	if err != nil {
		return MetaStore{}, err
	}
	return MetaStore{Directory: current, FsUUID: fsUUID, Mount: st.Mounts[current], Dir: st.Dirs[current]}, nil
}

// CheckMetaStoreSwitch refuses to set up dir while beegfs-meta.conf names
// another store that is initialised, or whose filesystem is not mounted so
// that nobody can tell: beegfs-setup-meta would point the daemon at a new,
// empty store and leave the metadata behind.
func CheckMetaStoreSwitch(dir string, s MetaStore) error {
	if s.Directory == "" || s.Directory == dir {
		return nil
	}
	if s.Dir.Initialised() {
		return fmt.Errorf("%s names %s, an initialised metadata store (%s %s); setting up %s would start %s on a new, empty store. "+
			"Set path = %s to keep it; moving metadata is a copy and an edit of %s by hand, not a new setup",
			MetaConfPath, s.Directory, NodeNumIDFile, strings.TrimSpace(string(s.Dir.NodeNumID)), dir, ServiceMeta, s.Directory, KeyMetaDirectory)
	}
	if s.FsUUID != "" && s.Mount.UUID != s.FsUUID {
		return fmt.Errorf("%s names %s on the filesystem with UUID %s, which is not mounted (%s is on %s, UUID %q), so whether it holds metadata cannot be told; "+
			"check cat /proc/mdstat and findmnt, and fix the mount",
			MetaConfPath, s.Directory, s.FsUUID, s.Mount.Path, s.Mount.Target, s.Mount.UUID)
	}
	return nil
}

// DisableMeta is the metadata resource's destroy: beegfs-meta stopped and
// disabled, its drop-in removed. The metadata directory stays untouched.
func DisableMeta(ctx context.Context, ex transport.Executor, s ServiceState) error {
	return disableAndDropDropIn(ctx, ex, ServiceMeta, s, MetaDropInPath)
}

// WriteMetaDropIn writes beegfs-meta's drop-in for the filesystem of the
// directory, creating its directory, unless the admin's own drop-ins guard it.
func WriteMetaDropIn(ctx context.Context, w transport.FileWriter, ex transport.Executor, mh MetaHost) (changed bool, err error) {
	if GuardedByHand(mh.DropIn, mh.RequiredMounts, mh.Mount.Target) {
		return false, nil
	}
	f, err := MetaDropIn(mh.Mount.Target)
	if err != nil {
		return false, err
	}
	return WriteDropIn(ctx, w, ex, f)
}
