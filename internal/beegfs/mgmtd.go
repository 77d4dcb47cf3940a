package beegfs

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Files and packages of the management service beyond those in beegfs.go.
const (
	// TLSKeyPath is the 8.x management API's private key (confirmed: the
	// Rust service's default tls-key-file).
	TLSKeyPath   = ConfDir + "/key.pem"
	MgmtdPackage = "beegfs-mgmtd"
	MetaPackage  = "beegfs-meta"
	// ConnAuthSize is the guide's secret: dd bs=128 count=1 from /dev/urandom.
	ConnAuthSize = 128
	// MgmtdDropInPath holds RequiresMountsFor for beegfs-mgmtd.
	MgmtdDropInPath = SystemdUnitDir + "/" + ServiceMgmtd + ".service.d/" + mgmtdDropInName + ".conf"
	mgmtdDropInName = "mgmtd"
)

// NotInstalledError reports a BeeGFS package that is not installed.
type NotInstalledError struct{ Package string }

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("package %s is not installed", e.Package)
}

// releaseOf gates on a package's installed version.
func releaseOf(pkg, version string) (Release, error) {
	if version == "" {
		return Release{}, &NotInstalledError{Package: pkg}
	}
	r, err := ParseRelease(version)
	if err != nil {
		return Release{}, fmt.Errorf("%s: %w", pkg, err)
	}
	return r, nil
}

// IsNotInstalled reports whether err says a BeeGFS package is missing.
func IsNotInstalled(err error) bool {
	var n *NotInstalledError
	return errors.As(err, &n)
}

// MgmtdHost is a controller's management service as one ReadHost found it.
type MgmtdHost struct {
	PackageVersion string
	Service        ServiceState
	TOML           FileState // 8.x config
	ConfV7         FileState // 7.x config
	DropIn         FileState
	// RequiredMounts are the mountpoints all of beegfs-mgmtd's drop-ins require.
	RequiredMounts []string
	// Mount is the filesystem of the store's directory (or of its nearest
	// existing ancestor before it is created).
	Mount Mount
	// DBSHA256 is "" when the 8.x database file does not exist.
	DBSHA256 string
	// StoreDir is the directory holding the database (7.x: the store).
	StoreDir       DirState
	ConnAuthSHA256 string
	CertSHA256     string
	KeySHA256      string
	// ConnAuthPerm and KeyPerm are "owner:group mode" of the two secrets.
	ConnAuthPerm string
	KeyPerm      string
}

// ValidateDBFile accepts a database path whose directory can be a
// RequiresMountsFor and a setup argument.
func ValidateDBFile(dbFile string) error {
	if err := ValidatePath(dbFile); err != nil {
		return fmt.Errorf("db_file: %w", err)
	}
	if path.Dir(dbFile) == "/" {
		return fmt.Errorf("db_file %q must be in a directory below /, on the filesystem of its own", dbFile)
	}
	return nil
}

// MgmtdStoreDir is the directory of the database: the filesystem that must
// be mounted, and in 7.x the store directory itself (the guide's
// /beegfs/mgmtd).
func MgmtdStoreDir(dbFile string) string { return path.Dir(dbFile) }

// ReadMgmtd reads everything the management resource needs in one round trip.
func ReadMgmtd(ctx context.Context, ex transport.Executor, dbFile string) (MgmtdHost, error) {
	if err := ValidateDBFile(dbFile); err != nil {
		return MgmtdHost{}, err
	}
	dir := MgmtdStoreDir(dbFile)
	st, err := ReadHost(ctx, ex, HostQuery{
		Packages:     []string{MgmtdPackage},
		Services:     []string{ServiceMgmtd},
		Files:        []string{MgmtdTOMLPath, MgmtdConfV7Path, MgmtdDropInPath},
		Fingerprints: []string{dbFile, ConnAuthPath, TLSCertPath, TLSKeyPath},
		Mounts:       []string{dir},
		Dirs:         []string{dir},
		DropInMounts: []string{ServiceMgmtd},
	})
	if err != nil {
		return MgmtdHost{}, err
	}
	return MgmtdHost{
		PackageVersion: st.Packages[MgmtdPackage],
		Service:        st.Services[ServiceMgmtd],
		TOML:           st.Files[MgmtdTOMLPath],
		ConfV7:         st.Files[MgmtdConfV7Path],
		DropIn:         st.Files[MgmtdDropInPath],
		RequiredMounts: st.RequiredMounts[ServiceMgmtd],
		Mount:          st.Mounts[dir],
		DBSHA256:       st.Fingerprints[dbFile],
		StoreDir:       st.Dirs[dir],
		ConnAuthSHA256: st.Fingerprints[ConnAuthPath],
		CertSHA256:     st.Fingerprints[TLSCertPath],
		KeySHA256:      st.Fingerprints[TLSKeyPath],
		ConnAuthPerm:   st.Permissions[ConnAuthPath],
		KeyPerm:        st.Permissions[TLSKeyPath],
	}, nil
}

// Release gates on the installed beegfs-mgmtd.
func (m MgmtdHost) Release() (Release, error) {
	return releaseOf(MgmtdPackage, m.PackageVersion)
}

// Config is the management config file of the release.
func (m MgmtdHost) Config(r Release) FileState {
	if r.Layout().MgmtdConfigKind == TOML {
		return m.TOML
	}
	return m.ConfV7
}

// Initialised reports whether the management store exists: 8.x the database
// file, 7.x a non-empty store directory. Either means the one-time
// initialisation has run and must not run again.
func (m MgmtdHost) Initialised(r Release) bool {
	if r.Major == 7 {
		return m.StoreDir.Exists && !m.StoreDir.Empty
	}
	return m.DBSHA256 != ""
}

// mgmtdDefaultPaths are the 8.x keys whose files this package writes at
// their default paths; a config pointing them elsewhere is refused, since
// the service would not read what the provider writes.
var mgmtdDefaultPaths = map[string]string{
	"auth-file":     ConnAuthPath,
	"tls-cert-file": TLSCertPath,
	"tls-key-file":  TLSKeyPath,
}

// SetMgmtdStore points the management config at the store: 8.x db-file =
// dbFile in the TOML, 7.x storeMgmtdDirectory = its directory.
func SetMgmtdStore(r Release, content []byte, dbFile string) ([]byte, error) {
	if err := ValidateDBFile(dbFile); err != nil {
		return nil, err
	}
	l := r.Layout()
	if l.MgmtdConfigKind == KeyValue {
		c, err := ParseConf(content)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.MgmtdConfigPath, err)
		}
		if err := c.Set(l.MgmtdStoreKey, MgmtdStoreDir(dbFile)); err != nil {
			return nil, err
		}
		return c.Bytes(), nil
	}
	for key, want := range mgmtdDefaultPaths {
		got, ok, err := GetTOMLString(content, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.MgmtdConfigPath, err)
		}
		if ok && got != want {
			return nil, fmt.Errorf("%s sets %s = %q; the provider manages %s, so remove the line or set it to that path", l.MgmtdConfigPath, key, got, want)
		}
	}
	return SetTOMLString(content, l.MgmtdStoreKey, dbFile)
}

// MgmtdStore reads the store the config names: 8.x the db-file, 7.x the
// storeMgmtdDirectory.
func MgmtdStore(r Release, content []byte) (store string, ok bool, err error) {
	l := r.Layout()
	if l.MgmtdConfigKind == KeyValue {
		c, err := ParseConf(content)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", l.MgmtdConfigPath, err)
		}
		v, ok := c.Get(l.MgmtdStoreKey)
		return v, ok && v != "", nil
	}
	return GetTOMLString(content, l.MgmtdStoreKey)
}

// DefaultMgmtdDBFile is where 8.x keeps its database when the config sets no
// db-file, and where beegfs-mgmtd --init then creates it (confirmed:
// mgmtd/src/config.rs of ThinkParQ/beegfs-rust).
const DefaultMgmtdDBFile = "/var/lib/beegfs/mgmtd.sqlite"

// ConfiguredMgmtdStore is the store the config points the service at now:
// 8.x its db-file, or the default when none is set; 7.x its
// storeMgmtdDirectory, "" when none is set.
func ConfiguredMgmtdStore(r Release, content []byte) (string, error) {
	store, ok, err := MgmtdStore(r, content)
	if err != nil {
		return "", err
	}
	if !ok && r.Layout().MgmtdConfigKind == TOML {
		return DefaultMgmtdDBFile, nil
	}
	return store, nil
}

// LiveMgmtdStore is the store the management config points the service at, when that is not
// the resource's, as found on the host.
type LiveMgmtdStore struct {
	Path   string // "" when the config points at the resource's own store, or at none
	Exists bool
	// OnRootFS: the store is on the root filesystem, where the provider keeps no database, so
	// it cannot be adopted where it is.
	OnRootFS bool
}

// ReadLiveMgmtdStore reads the store the config points the service at when that is not
// dbFile's: a second round trip, which only a create makes.
func ReadLiveMgmtdStore(ctx context.Context, ex transport.Executor, m MgmtdHost, r Release, dbFile string) (LiveMgmtdStore, error) {
	cfg := m.Config(r)
	if !cfg.Exists {
		return LiveMgmtdStore{}, nil
	}
	current, err := ConfiguredMgmtdStore(r, cfg.Content)
	if err != nil {
		return LiveMgmtdStore{}, fmt.Errorf("%s: %w", r.Layout().MgmtdConfigPath, err)
	}
	own := dbFile
	if r.Major == 7 {
		own = MgmtdStoreDir(dbFile)
	}
	if current == "" || current == own {
		return LiveMgmtdStore{}, nil
	}
	if err := ValidatePath(current); err != nil {
		return LiveMgmtdStore{}, fmt.Errorf("%s = %q in %s cannot be checked: %w", r.Layout().MgmtdStoreKey, current, r.Layout().MgmtdConfigPath, err)
	}
	q := HostQuery{Fingerprints: []string{current}, Mounts: []string{current}}
	if r.Major == 7 {
		q = HostQuery{Dirs: []string{current}, Mounts: []string{current}}
	}
	st, err := ReadHost(ctx, ex, q)
	if err != nil {
		return LiveMgmtdStore{}, err
	}
	d := st.Dirs[current]
	return LiveMgmtdStore{
		Path:     current,
		Exists:   st.Fingerprints[current] != "" || (d.Exists && !d.Empty),
		OnRootFS: st.Mounts[current].Target == "/",
	}, nil
}

// CheckLiveMgmtdStore refuses to point the service at dbFile while the config points it at
// another store that exists: the create would initialise a new, empty database and restart
// the service on it, abandoning the one the cluster runs on.
func CheckLiveMgmtdStore(r Release, dbFile string, s LiveMgmtdStore) error {
	if !s.Exists {
		return nil
	}
	l, own := r.Layout(), dbFile
	if r.Major == 7 {
		own = MgmtdStoreDir(dbFile)
	}
	return fmt.Errorf("%s points %s at %s (%s), which exists; setting %s to %s would initialise a new, empty store there and restart the service on it, leaving %s behind",
		l.MgmtdConfigPath, ServiceMgmtd, s.Path, l.MgmtdStoreKey, l.MgmtdStoreKey, own, s.Path)
}

// MgmtdDropIn is the drop-in that keeps beegfs-mgmtd from starting before
// the store's filesystem is mounted.
func MgmtdDropIn(mountpoint string) (transport.File, error) {
	return RequiresMountsDropIn(ServiceMgmtd, mgmtdDropInName, mountpoint)
}

// MgmtdProblems lists what differs on the controller from a converged
// management service, in words for a plan: an empty list means in sync.
// mountpoint and fsUUID are the filesystem the store was set up on.
func MgmtdProblems(m MgmtdHost, r Release, dbFile, mountpoint, fsUUID string) []string {
	var problems []string
	if !OnRecordedFilesystem(m.Mount, mountpoint, fsUUID) {
		problems = append(problems, fmt.Sprintf("filesystem missing: %s is on %s (UUID %q), not on %s (UUID %s)",
			MgmtdStoreDir(dbFile), m.Mount.Target, m.Mount.UUID, mountpoint, fsUUID))
	}
	if want, err := SetMgmtdStore(r, m.Config(r).Content, dbFile); err != nil || !m.Config(r).Exists || string(want) != string(m.Config(r).Content) {
		problems = append(problems, fmt.Sprintf("%s does not set %s to %s", r.Layout().MgmtdConfigPath, r.Layout().MgmtdStoreKey, dbFile))
	}
	if d, err := MgmtdDropIn(mountpoint); err == nil && !DropInGuards(m.DropIn, d, m.RequiredMounts, mountpoint) {
		problems = append(problems, "drop-in "+MgmtdDropInPath+" missing or changed")
	}
	if m.ConnAuthSHA256 == "" {
		problems = append(problems, ConnAuthPath+" missing")
	}
	problems = append(problems, secretPermProblems(ConnAuthPath, m.ConnAuthPerm)...)
	problems = append(problems, secretPermProblems(TLSKeyPath, m.KeyPerm)...)
	if r.Layout().NeedsTLSCert {
		if m.CertSHA256 == "" {
			problems = append(problems, TLSCertPath+" missing")
		}
		if m.KeySHA256 == "" {
			problems = append(problems, TLSKeyPath+" missing")
		}
	}
	return append(problems, daemonProblems(ServiceMgmtd, m.Service)...)
}

func daemonProblems(service string, s ServiceState) []string {
	var problems []string
	if !s.Running() {
		problems = append(problems, service+" not running ("+s.Active+")")
	}
	if !s.IsEnabled() {
		problems = append(problems, service+" not enabled ("+s.Enabled+")")
	}
	return problems
}

// InitMgmtd runs the one-time initialisation after creating the store's
// directory. AlreadyInitialised comes back as an outcome, not an error: the
// caller re-reads the host to confirm the store really is there.
func InitMgmtd(ctx context.Context, ex transport.Executor, r Release, dbFile string) (Outcome, error) {
	if err := ValidateDBFile(dbFile); err != nil {
		return Failed, err
	}
	cmd, err := MgmtdInitCommand(r, MgmtdStoreDir(dbFile))
	if err != nil {
		return Failed, err
	}
	mkdir := transport.Command("mkdir", "-p", "-m", "0700", MgmtdStoreDir(dbFile))
	if r.Major == 7 {
		// beegfs-setup-mgmtd creates its directory and refuses a non-empty one.
		mkdir = "true"
	}
	res, runErr := ex.Sudo(ctx, transport.ScriptEnv+mkdir+" && "+cmd+"\n", nil)
	return setupOutcome(ctx, ex, cmd, cmd, res, runErr)
}

// DisableMgmtd is the management resource's destroy: beegfs-mgmtd stopped
// and disabled, its drop-in removed. The database and the shared files stay.
func DisableMgmtd(ctx context.Context, ex transport.Executor, s ServiceState) error {
	return disableAndDropDropIn(ctx, ex, ServiceMgmtd, s, MgmtdDropInPath)
}

// disableAndDropDropIn stops and disables a service and removes its drop-in,
// reloading systemd only when there was one. A unit systemd does not know
// (the package was removed) has nothing to stop, and systemctl would fail.
func disableAndDropDropIn(ctx context.Context, ex transport.Executor, service string, s ServiceState, dropIn string) error {
	if s.Enabled != "not-found" {
		if err := DisableNow(ctx, ex, service); err != nil {
			return err
		}
	}
	return RemoveDropIn(ctx, ex, dropIn)
}

// WriteMgmtdDropIn writes beegfs-mgmtd's drop-in for the filesystem of the
// store, creating its directory, unless the admin's own drop-ins guard it.
func WriteMgmtdDropIn(ctx context.Context, w transport.FileWriter, ex transport.Executor, mh MgmtdHost) (changed bool, err error) {
	if GuardedByHand(mh.DropIn, mh.RequiredMounts, mh.Mount.Target) {
		return false, nil
	}
	f, err := MgmtdDropIn(mh.Mount.Target)
	if err != nil {
		return false, err
	}
	return WriteDropIn(ctx, w, ex, f)
}
