package beegfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The client as the guide sets it up: BeeGFS mounted over /home on every node.
const (
	ClientPackage          = "beegfs-client"
	DefaultClientMountPath = "/home"
	// DefaultClientFSType is what findmnt reports for a BeeGFS mount
	// (confirmed: the guide, "findmnt /home # expect: beegfs_nodev ... beegfs").
	DefaultClientFSType = "beegfs"
)

// fsTypeName is a filesystem type as findmnt prints it (beegfs, tmpfs, fuse.x).
var fsTypeName = regexp.MustCompile(`^[a-z0-9][a-z0-9._]{0,31}$`)

// ClientSettings is the mount a node's client is asked for.
type ClientSettings struct {
	MountPath string
	Mgmtd     string
	FSType    string
}

// Validate refuses what cannot go into beegfs-mounts.conf, onto the setup
// script's command line or into a comparison with findmnt's output.
func (s ClientSettings) Validate() error {
	if err := ValidateMountPath(s.MountPath); err != nil {
		return err
	}
	if err := ValidateMgmtdHost(s.Mgmtd); err != nil {
		return err
	}
	return ValidateFSType(s.FSType)
}

// ValidateMountPath accepts a directory other than "/": BeeGFS mounted over
// the root directory would hide the whole operating system.
func ValidateMountPath(p string) error {
	if p == "/" {
		return errors.New(`mount path "/" would hide the operating system under BeeGFS`)
	}
	if err := ValidatePath(p); err != nil {
		return fmt.Errorf("mount path: %w", err)
	}
	return nil
}

// ValidateFSType accepts a filesystem type name as findmnt prints it.
func ValidateFSType(t string) error {
	if !fsTypeName.MatchString(t) {
		return fmt.Errorf("filesystem type %q is not a type name such as beegfs", t)
	}
	return nil
}

// ClientState is what a node's client looks like now.
type ClientState struct {
	Version    string // installed beegfs-client, "" when missing
	Service    ServiceState
	ClientConf FileState
	MountsConf FileState
	// ConnAuth reports whether the shared secret is present; only its
	// fingerprint ever left the host.
	ConnAuth bool
	// Mount is the filesystem holding the mount path: the path's own mount
	// when something is mounted there, else an ancestor's.
	Mount Mount
}

// ReadClient reads the client's package, service, files and mount in one
// round trip.
func ReadClient(ctx context.Context, ex Executor, mountPath string) (ClientState, error) {
	if err := ValidateMountPath(mountPath); err != nil {
		return ClientState{}, err
	}
	st, err := ReadHost(ctx, ex, HostQuery{
		Packages:     []string{ClientPackage},
		Services:     []string{ServiceClient},
		Files:        []string{ClientConfPath, MountsConfPath},
		Fingerprints: []string{ConnAuthPath},
		Mounts:       []string{mountPath},
	})
	if err != nil {
		return ClientState{}, err
	}
	return ClientState{
		Version:    st.Packages[ClientPackage],
		Service:    st.Services[ServiceClient],
		ClientConf: st.Files[ClientConfPath],
		MountsConf: st.Files[MountsConfPath],
		ConnAuth:   st.Fingerprints[ConnAuthPath] != "",
		Mount:      st.Mounts[mountPath],
	}, nil
}

// Installed reports whether the client package is there.
func (s ClientState) Installed() bool { return s.Version != "" }

// MgmtdHost is sysMgmtdHost of beegfs-client.conf, "" when unset or unreadable.
func (s ClientState) MgmtdHost() string {
	c, err := s.conf()
	if err != nil {
		return ""
	}
	v, _ := c.Get(KeyMgmtdHost)
	return v
}

func (s ClientState) conf() (*Conf, error) {
	if !s.ClientConf.Exists {
		return nil, fmt.Errorf("%s is missing", ClientConfPath)
	}
	c, err := ParseConf(s.ClientConf.Content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ClientConfPath, err)
	}
	return c, nil
}

// MountedAt reports whether findmnt shows a filesystem of type fsType
// mounted exactly at mountPath.
func (s ClientState) MountedAt(mountPath, fsType string) bool {
	return s.Mount.Target == mountPath && s.Mount.FSType == fsType
}

// MountsConfOK reports whether beegfs-mounts.conf is exactly the guide's one line.
func (s ClientState) MountsConfOK(mountPath string) bool {
	want, err := MountsConf(mountPath)
	return err == nil && s.MountsConf.Exists && string(s.MountsConf.Content) == string(want.Content)
}

// Problems lists, in words, what differs from set, apart from the
// management host, which the caller reports as the attribute's own value.
func (s ClientState) Problems(set ClientSettings) []string {
	var p []string
	if !s.MountsConfOK(set.MountPath) {
		p = append(p, MountsConfPath+" does not hold \""+set.MountPath+" "+ClientConfPath+"\"")
	}
	if !s.Service.IsEnabled() {
		p = append(p, ServiceClient+" is "+s.Service.Enabled+", not enabled")
	}
	if !s.Service.Running() {
		p = append(p, ServiceClient+" is "+s.Service.Active+", not active")
	}
	if !s.MountedAt(set.MountPath, set.FSType) {
		p = append(p, s.mountProblem(set))
	}
	return p
}

// mountProblem is the guide's "home directories are missing on one node":
// what findmnt shows instead of the client's mount.
func (s ClientState) mountProblem(set ClientSettings) string {
	if s.Mount.Target != set.MountPath {
		return fmt.Sprintf("%s is not mounted (the local directory on %s is visible)", set.MountPath, s.Mount.Target)
	}
	return fmt.Sprintf("%s is mounted as %s, not %s", set.MountPath, s.Mount.FSType, set.FSType)
}

// ImportedSettings reads the settings of an existing client from its files:
// the first mount of beegfs-mounts.conf, sysMgmtdHost, and the type that is
// mounted there now (the expected default when nothing is).
func (s ClientState) ImportedSettings() (ClientSettings, error) {
	if !s.Service.IsEnabled() && !s.Service.Running() {
		return ClientSettings{}, fmt.Errorf("%s is neither enabled nor running", ServiceClient)
	}
	mountPath, err := firstMount(s.MountsConf)
	if err != nil {
		return ClientSettings{}, err
	}
	set := ClientSettings{MountPath: mountPath, Mgmtd: s.MgmtdHost(), FSType: DefaultClientFSType}
	if s.Mount.Target == mountPath {
		set.FSType = s.Mount.FSType
	}
	return set, nil
}

func firstMount(f FileState) (string, error) {
	if !f.Exists {
		return "", fmt.Errorf("%s is missing", MountsConfPath)
	}
	for _, line := range strings.Split(string(f.Content), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if err := ValidateMountPath(fields[0]); err != nil {
			return "", fmt.Errorf("%s: %w", MountsConfPath, err)
		}
		return fields[0], nil
	}
	return "", fmt.Errorf("%s names no mount", MountsConfPath)
}

// CheckConnAuth refuses to start a client that would fail for lack of the
// shared secret: the management resource distributes it first.
func (s ClientState) CheckConnAuth() error {
	c, err := s.conf()
	if err != nil {
		return err
	}
	if v, _ := c.Get("connDisableAuthentication"); v == "true" {
		return nil
	}
	// Only the default location was fingerprinted; another one is for the
	// client itself to check when it mounts.
	if v, _ := c.Get("connAuthFile"); v != "" && v != ConnAuthPath {
		return nil
	}
	if !s.ConnAuth {
		return fmt.Errorf("%s is missing, and %s authenticates with it", ConnAuthPath, ClientConfPath)
	}
	return nil
}

// StagingConf is the client config a staging mount uses: the node's own,
// or, when it does not name mgmtd yet, a copy that does, so that looking at
// BeeGFS before the first mount changes nothing on the node. nil means the
// node's own file is right as it is.
func (s ClientState) StagingConf(mgmtd string) ([]byte, error) {
	c, err := s.conf()
	if err != nil {
		return nil, err
	}
	if v, _ := c.Get(KeyMgmtdHost); v == mgmtd {
		return nil, nil
	}
	if err := c.Set(KeyMgmtdHost, mgmtd); err != nil {
		return nil, err
	}
	return c.Bytes(), nil
}

// SetupClient runs "beegfs-setup-client -m MGMT", which sets sysMgmtdHost.
func SetupClient(ctx context.Context, ex Executor, mgmtd string) error {
	cmd, err := SetupClientCommand(mgmtd)
	if err != nil {
		return err
	}
	if _, err := ex.Sudo(ctx, transport.ScriptEnv+cmd+"\n", nil); err != nil {
		return fmt.Errorf("%s: %w", SetupClientTool, err)
	}
	transport.Changed(ctx, ex, "ran "+cmd)
	return nil
}

// WriteMountsConf writes the guide's beegfs-mounts.conf over what was read.
func WriteMountsConf(ctx context.Context, w FileWriter, mountPath string, read FileState) (changed bool, err error) {
	f, err := MountsConf(mountPath)
	if err != nil {
		return false, err
	}
	if read.Exists && string(read.Content) == string(f.Content) {
		return false, nil
	}
	f.ExpectSHA256 = read.SHA256()
	return w.WriteFile(ctx, f)
}

// Account is the login account whose home the first mount must not hide.
type Account struct {
	Name string
	UID  int
	Home string
}

// LookupAccount reads an account from the node's user database.
func LookupAccount(ctx context.Context, ex Executor, name string) (Account, error) {
	if !transport.AccountNamePattern.MatchString(name) {
		return Account{}, fmt.Errorf("%q is not a user name", name)
	}
	res, err := ex.Sudo(ctx, transport.ScriptEnv+"getent passwd -- "+transport.Quote(name)+"\n", nil)
	if err != nil {
		return Account{}, fmt.Errorf("look up user %s: %w", name, err)
	}
	return parsePasswdLine(name, string(res.Stdout))
}

func parsePasswdLine(name, out string) (Account, error) {
	fields := strings.Split(strings.TrimSpace(out), ":")
	if len(fields) != 7 || fields[0] != name {
		return Account{}, fmt.Errorf("look up user %s: unexpected getent output", name)
	}
	uid, err := strconv.Atoi(fields[2])
	if err != nil {
		return Account{}, fmt.Errorf("look up user %s: uid %q: %w", name, fields[2], err)
	}
	return Account{Name: name, UID: uid, Home: fields[5]}, nil
}

// HomeUnder is where an account's home lies below a mount path, "" when the
// mount does not cover it.
func HomeUnder(a Account, mountPath string) string {
	switch {
	case a.Home == mountPath:
		return "."
	case strings.HasPrefix(a.Home, mountPath+"/"):
		return strings.TrimPrefix(a.Home, mountPath+"/")
	default:
		return ""
	}
}

// sshPaths are what sshd needs to let the account in with its key, relative
// to its home: the home itself, .ssh and authorized_keys.
var sshPaths = []string{".", ".ssh", ".ssh/authorized_keys"}

// PathInfo is a file as stat sees it.
type PathInfo struct {
	Exists bool
	UID    int
	Mode   fs.FileMode // permission bits
	Dir    bool
}

// HomeCopy is one copy of the account's home: the files of sshPaths.
type HomeCopy [3]PathInfo

// Usable reports why sshd would not accept a key login from this copy, as
// its StrictModes checks do: each path must exist with the right kind, be
// owned by the account or root, and not be writable by group or others.
func (c HomeCopy) Usable(a Account) error {
	for i, p := range c {
		name, wantDir := a.Home, i < 2
		if i > 0 {
			name += "/" + sshPaths[i]
		}
		switch {
		case !p.Exists:
			return fmt.Errorf("%s does not exist", name)
		case p.Dir != wantDir && wantDir:
			return fmt.Errorf("%s is not a directory", name)
		case p.Dir != wantDir:
			return fmt.Errorf("%s is not a regular file", name)
		case p.UID != a.UID && p.UID != 0:
			return fmt.Errorf("%s is owned by UID %d, not by %s (UID %d)", name, p.UID, a.Name, a.UID)
		case p.Mode&0o022 != 0:
			return fmt.Errorf("%s has mode %04o: writable by group or others, which sshd refuses", name, p.Mode)
		}
	}
	return nil
}

// HomeReport is the account's home as seen on BeeGFS (through a staging
// mount) and in the local directory the first mount would hide.
type HomeReport struct {
	OnBeeGFS HomeCopy
	Local    HomeCopy
}

// Staging describes one look at BeeGFS before the first mount.
type Staging struct {
	MountPath string
	// Rel is the account's home below MountPath (see HomeUnder).
	Rel string
	// Conf is the client config to mount with; nil uses the node's own.
	Conf []byte
	// Migrate copies the local content into BeeGFS first.
	Migrate bool
}

// InspectHome mounts BeeGFS at a private staging mountpoint the way the
// client does, and reports the account's home there and locally. With
// Migrate it first copies the local content into BeeGFS from a bind mount of
// the local directory, so the copy reads the local files whatever is mounted
// later. The staging mounts live in a mount namespace of their own: they are
// gone when the script ends, even when it fails, and no other process sees
// them.
func InspectHome(ctx context.Context, ex Executor, s Staging) (HomeReport, error) {
	script, err := stagingScript(s)
	if err != nil {
		return HomeReport{}, err
	}
	res, err := ex.Sudo(ctx, script, s.Conf)
	if err != nil {
		what := "look at BeeGFS through a staging mount"
		if s.Migrate {
			what = "copy the local " + s.MountPath + " into BeeGFS"
		}
		return HomeReport{}, fmt.Errorf("%s: %w", what, err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return HomeReport{}, fmt.Errorf("read the staging mount: %w", err)
	}
	return parseHomeReport(sections)
}

func stagingScript(s Staging) (string, error) {
	if err := ValidateMountPath(s.MountPath); err != nil {
		return "", err
	}
	if s.Rel == "" || strings.HasPrefix(s.Rel, "/") || strings.Contains("/"+s.Rel+"/", "/../") {
		return "", fmt.Errorf("home %q is not a path below %s", s.Rel, s.MountPath)
	}
	migrate := "0"
	if s.Migrate {
		migrate = "1"
	}
	ownConf := "0"
	if s.Conf != nil {
		ownConf = "1"
	}
	var b strings.Builder
	b.WriteString(transport.ScriptEnv)
	fmt.Fprintf(&b, "mnt=%s rel=%s migrate=%s ownconf=%s cfg=%s\n",
		transport.Quote(s.MountPath), transport.Quote(s.Rel), migrate, ownConf, ClientConfPath)
	b.WriteString(stagingBody)
	return b.String(), nil
}

// stagingBody runs the staging in a private mount namespace (unshare). The
// trap, set before anything else can fail, removes the staging directory on
// every exit, with rmdir only, which cannot delete anything that is still
// mounted there. rsync keeps numeric owners, hard links, ACLs and
// extended attributes (-aHAX --numeric-ids) and never overwrites a file that
// already exists on BeeGFS (--ignore-existing): a migration adds what is
// missing and leaves what other nodes wrote alone.
const stagingBody = `if [ "$migrate" = 1 ] && ! command -v rsync >/dev/null; then
	echo "rsync is not installed: install it to migrate $mnt" >&2; exit 1
fi
stage=$(mktemp -d /run/gpucluster-beegfs-staging.XXXXXX) || exit 1
trap 'rm -f "$stage/client.conf"; rmdir "$stage/beegfs" "$stage/local" "$stage" 2>/dev/null' EXIT
if [ "$ownconf" = 1 ]; then cat > "$stage/client.conf" && cfg=$stage/client.conf || exit 1; fi
mkdir "$stage/beegfs" "$stage/local" || exit 1
inner=$(cat <<'EOS'
` + transport.SectionFuncs + `stage=$1 cfg=$2 mnt=$3 rel=$4 migrate=$5
mount -t beegfs beegfs_nodev "$stage/beegfs" -o "cfgFile=$cfg" || exit 1
if [ "$migrate" = 1 ]; then
	mount --bind "$mnt" "$stage/local" || exit 1
	rsync -aHAX --numeric-ids --ignore-existing "$stage/local/" "$stage/beegfs/" >&2 || exit 1
fi
i=0
for p in . .ssh .ssh/authorized_keys; do
	sec "b$i"; stat -c "%u %a %F" -- "$stage/beegfs/$rel/$p" 2>/dev/null; end $?
	sec "l$i"; stat -c "%u %a %F" -- "$mnt/$rel/$p" 2>/dev/null; end $?
	i=$((i + 1))
done
EOS
)
unshare --mount --propagation private /bin/sh -c "$inner" sh "$stage" "$cfg" "$mnt" "$rel" "$migrate"
`

func parseHomeReport(sections map[string]transport.Section) (HomeReport, error) {
	var r HomeReport
	for i := range sshPaths {
		for _, side := range []struct {
			key  string
			into *PathInfo
		}{{"b", &r.OnBeeGFS[i]}, {"l", &r.Local[i]}} {
			s, ok := sections[side.key+strconv.Itoa(i)]
			if !ok {
				return HomeReport{}, fmt.Errorf("read the staging mount: no answer for %s", sshPaths[i])
			}
			info, err := parseStat(s)
			if err != nil {
				return HomeReport{}, fmt.Errorf("read the staging mount: %s: %w", sshPaths[i], err)
			}
			*side.into = info
		}
	}
	return r, nil
}

// parseStat reads stat -c "%u %a %F"; a failed stat is a missing path.
func parseStat(s transport.Section) (PathInfo, error) {
	if s.Status != 0 || len(s.Lines) == 0 {
		return PathInfo{}, nil
	}
	fields := strings.SplitN(s.Lines[0], " ", 3)
	if len(fields) != 3 {
		return PathInfo{}, fmt.Errorf("unexpected stat output %q", s.Lines[0])
	}
	uid, err := strconv.Atoi(fields[0])
	if err != nil {
		return PathInfo{}, fmt.Errorf("unexpected owner %q", fields[0])
	}
	mode, err := strconv.ParseUint(fields[1], 8, 32)
	if err != nil {
		return PathInfo{}, fmt.Errorf("unexpected mode %q", fields[1])
	}
	return PathInfo{Exists: true, UID: uid, Mode: fs.FileMode(mode), Dir: fields[2] == "directory"}, nil
}

// HomeRefusal is pitfall P9 refused: the first mount would hide the
// connecting account's home with its authorized_keys, and key-based SSH to
// the node (the provider's own included) would stop working.
type HomeRefusal struct {
	Account   Account
	MountPath string
	// OnBeeGFS says what is wrong with the home on BeeGFS; Local, set only
	// when a migration was asked for, what is wrong with the local one.
	OnBeeGFS, Local error
	// Copied reports that the migration had already copied the local
	// content into BeeGFS when the home there still proved unusable: the
	// node is unchanged, BeeGFS is not.
	Copied bool
}

func (e *HomeRefusal) Error() string {
	msg := fmt.Sprintf("mounting BeeGFS over %s would hide %s's home %s with its SSH keys: on BeeGFS, %v",
		e.MountPath, e.Account.Name, e.Account.Home, e.OnBeeGFS)
	if e.Local != nil {
		msg += fmt.Sprintf("; locally, %v, so there is nothing to migrate", e.Local)
	}
	return msg
}

// GuardFirstMount decides whether mounting over set.MountPath is safe for
// the account the provider connects as, migrating the local content first
// when migrate is set. It returns a *HomeRefusal, and has changed nothing,
// when the account's home with its authorized_keys would not be on BeeGFS.
func GuardFirstMount(ctx context.Context, ex Executor, st ClientState, set ClientSettings, admin string, migrate bool) error {
	a, err := LookupAccount(ctx, ex, admin)
	if err != nil {
		return err
	}
	rel := HomeUnder(a, set.MountPath)
	if rel == "" && !migrate {
		return nil // the mount hides nothing of the account
	}
	conf, err := st.StagingConf(set.Mgmtd)
	if err != nil {
		return err
	}
	if rel == "" {
		// Nothing of the account to check; the local content still moves.
		_, err := InspectHome(ctx, ex, Staging{MountPath: set.MountPath, Rel: ".", Conf: conf, Migrate: true})
		return err
	}
	s := Staging{MountPath: set.MountPath, Rel: rel, Conf: conf}
	rep, err := InspectHome(ctx, ex, s)
	if err != nil {
		return err
	}
	onBeeGFS := rep.OnBeeGFS.Usable(a)
	switch {
	case !migrate && onBeeGFS == nil:
		return nil
	case !migrate:
		return &HomeRefusal{Account: a, MountPath: set.MountPath, OnBeeGFS: onBeeGFS}
	}
	if local := rep.Local.Usable(a); onBeeGFS != nil && local != nil {
		return &HomeRefusal{Account: a, MountPath: set.MountPath, OnBeeGFS: onBeeGFS, Local: local}
	}
	s.Migrate = true
	rep, err = InspectHome(ctx, ex, s)
	if err != nil {
		return err
	}
	if err := rep.OnBeeGFS.Usable(a); err != nil {
		return &HomeRefusal{Account: a, MountPath: set.MountPath, OnBeeGFS: fmt.Errorf("after copying the local content, %w", err), Copied: true}
	}
	return nil
}

// StartClient brings the service to "enabled, running, mounted": a changed
// config or a lost mount needs a restart (stop unmounts, start mounts),
// a stopped or disabled service enable --now.
func StartClient(ctx context.Context, ex Executor, st ClientState, configChanged, mounted bool) error {
	switch {
	case st.Service.Running() && (configChanged || !mounted):
		return Restart(ctx, ex, ServiceClient)
	case !st.Service.Running() || !st.Service.IsEnabled():
		return EnableNow(ctx, ex, ServiceClient)
	default:
		return nil
	}
}

// MountedFSType is what `findmnt -n -o FSTYPE PATH` prints, the guide's check
// that BeeGFS is mounted over /home; "" when nothing is mounted there, which is
// the guide's "home directories are missing on one node".
func MountedFSType(ctx context.Context, ex Executor, mountPath string) (string, error) {
	read, err := MountedFSTypeRead(mountPath)
	if err != nil {
		return "", err
	}
	res, err := ex.Sudo(ctx, transport.ScriptEnv+transport.SectionFuncs+read, nil)
	if err != nil {
		return "", fmt.Errorf("findmnt %s: %w", mountPath, err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return "", fmt.Errorf("findmnt %s: %w", mountPath, err)
	}
	fsType, err := MountedFSTypeFrom(sections, mountPath)
	if stderr := strings.TrimSpace(string(res.Stderr)); err != nil && stderr != "" {
		return "", fmt.Errorf("%w: %s", err, stderr)
	}
	return fsType, err
}

// mountedFSTypeSection is the section MountedFSTypeRead prints.
const mountedFSTypeSection = "mounted-fstype"

// MountedFSTypeRead is MountedFSType's findmnt as shell text for a batched script
// (transport.SectionFuncs), so a check that reads more of the node asks it in one command.
func MountedFSTypeRead(mountPath string) (string, error) {
	if err := ValidateMountPath(mountPath); err != nil {
		return "", err
	}
	return "sec " + mountedFSTypeSection + "; findmnt -n -o FSTYPE -- " + transport.Quote(mountPath) + "; end $?\n", nil
}

// MountedFSTypeFrom reads MountedFSTypeRead's answer from a batched script's sections.
func MountedFSTypeFrom(sections map[string]transport.Section, mountPath string) (string, error) {
	sec, ok := sections[mountedFSTypeSection]
	switch {
	case !ok:
		return "", fmt.Errorf("findmnt %s: no answer", mountPath)
	case sec.Status == 1:
		// findmnt exits 1 when nothing is mounted at the path: an answer, not a failure.
		return "", nil
	case sec.Status != 0:
		return "", fmt.Errorf("findmnt %s: exited with status %d", mountPath, sec.Status)
	case len(sec.Lines) == 0:
		return "", nil
	}
	// Mounts stacked on one path (a local /home partition under BeeGFS) print one line
	// each in mount order; the last is the one in use.
	return strings.TrimSpace(sec.Lines[len(sec.Lines)-1]), nil
}
