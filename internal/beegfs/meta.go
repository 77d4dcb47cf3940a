package beegfs

import (
	"context"
	"fmt"

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
	// Mount is the filesystem holding the directory (or its nearest
	// existing ancestor before it is created).
	Mount Mount
	Dir   DirState
}

// ReadMeta reads everything the metadata resource needs in one round trip.
func ReadMeta(ctx context.Context, ex Executor, dir string) (MetaHost, error) {
	if err := ValidateDirectory(dir); err != nil {
		return MetaHost{}, err
	}
	st, err := ReadHost(ctx, ex, HostQuery{
		Packages: []string{MetaPackage},
		Services: []string{ServiceMeta},
		Files:    []string{MetaConfPath, MetaDropInPath},
		Mounts:   []string{dir},
		Dirs:     []string{dir},
	})
	if err != nil {
		return MetaHost{}, err
	}
	return MetaHost{
		PackageVersion: st.Packages[MetaPackage],
		Service:        st.Services[ServiceMeta],
		Config:         st.Files[MetaConfPath],
		DropIn:         st.Files[MetaDropInPath],
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
// nodeNumID is the configured one and refused when it is another; a
// non-empty directory without a nodeNumID is not BeeGFS's and is refused.
func MetaSetupNeeded(dir string, d DirState, nodeNumID int64) (bool, error) {
	if !d.Exists || d.Empty {
		return true, nil
	}
	if !d.Initialised() {
		return false, fmt.Errorf("%s is not empty and holds no %s: it is not a metadata directory, and beegfs-setup-meta would refuse it; empty it or choose another path", dir, NodeNumIDFile)
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
func SetupMeta(ctx context.Context, ex Executor, dir string, nodeNumID int64, mgmtd string) (Outcome, error) {
	cmd, err := SetupMetaCommand(dir, nodeNumID, mgmtd)
	if err != nil {
		return Failed, err
	}
	res, runErr := ex.Sudo(ctx, transport.ScriptEnv+cmd+"\n", nil)
	return ClassifySetup(SetupMetaTool, res, runErr)
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

// MetaProblems lists what differs from a converged metadata service, in
// words for a plan: an empty list means in sync. The interlock is checked
// against the filesystem mounted now.
func MetaProblems(m MetaHost, r Release, dir, mgmtd string) []string {
	var problems []string
	c, err := ParseConf(m.Config.Content)
	if err != nil || !m.Config.Exists {
		problems = append(problems, MetaConfPath+" missing or unreadable")
	} else {
		problems = append(problems, metaConfProblems(c, m, r, dir, mgmtd)...)
	}
	if d, err := MetaDropIn(m.Mount.Target); err != nil || !m.DropIn.Exists || string(m.DropIn.Content) != string(d.Content) {
		problems = append(problems, "drop-in "+MetaDropInPath+" missing or changed")
	}
	return append(problems, daemonProblems(ServiceMeta, m.Service)...)
}

func metaConfProblems(c *Conf, m MetaHost, r Release, dir, mgmtd string) []string {
	var problems []string
	t, err := CheckMetaInterlock(c)
	switch {
	case err != nil:
		problems = append(problems, "interlock: "+err.Error())
	case t.Directory != dir:
		problems = append(problems, fmt.Sprintf("%s is %s, want %s", KeyMetaDirectory, t.Directory, dir))
	default:
		if err := CheckMountedUUID(t, m.Mount.Target, m.Mount.UUID); err != nil {
			problems = append(problems, "interlock: "+err.Error())
		}
	}
	if got, _ := c.Get(KeyMgmtdHost); got != mgmtd {
		problems = append(problems, fmt.Sprintf("%s is %q, want %q", KeyMgmtdHost, got, mgmtd))
	}
	if got, _ := c.Get(r.Layout().ServerAuthKey); got == "" {
		problems = append(problems, r.Layout().ServerAuthKey+" not set")
	}
	return problems
}

// DisableMeta is the metadata resource's destroy: beegfs-meta stopped and
// disabled, its drop-in removed. The metadata directory stays untouched.
func DisableMeta(ctx context.Context, ex Executor) error {
	return disableAndDropDropIn(ctx, ex, ServiceMeta, MetaDropInPath)
}

// WriteMetaDropIn writes beegfs-meta's drop-in, creating its directory.
func WriteMetaDropIn(ctx context.Context, w FileWriter, ex Executor, mountpoint string) (changed bool, err error) {
	f, err := MetaDropIn(mountpoint)
	if err != nil {
		return false, err
	}
	return WriteDropIn(ctx, w, ex, f)
}
