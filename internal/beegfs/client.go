package beegfs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
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
	// Module is the client's kernel module.
	Module ModuleState
}

// ReadClient reads the client's package, service, files and mount in one
// round trip.
func ReadClient(ctx context.Context, ex transport.Executor, mountPath string) (ClientState, error) {
	if err := ValidateMountPath(mountPath); err != nil {
		return ClientState{}, err
	}
	st, err := ReadHost(ctx, ex, HostQuery{
		Packages:     []string{ClientPackage},
		Services:     []string{ServiceClient},
		Files:        []string{ClientConfPath, MountsConfPath},
		Fingerprints: []string{ConnAuthPath},
		Mounts:       []string{mountPath},
		ClientModule: true,
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
		Module:     st.Module,
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
	if m := s.Module.Problem(); m != "" {
		p = append(p, m)
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
func SetupClient(ctx context.Context, ex transport.Executor, mgmtd string) error {
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
func WriteMountsConf(ctx context.Context, w transport.FileWriter, mountPath string, read FileState) (changed bool, err error) {
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

// StartClient brings the service to "enabled, running, mounted": a changed
// config, a lost mount or a module to build needs a restart (stop unmounts and
// unloads, start builds, loads and mounts), a stopped or disabled service enable --now.
func StartClient(ctx context.Context, ex transport.Executor, st ClientState, configChanged, mounted bool) error {
	switch {
	case st.Service.Running() && (configChanged || !mounted || st.Module.NeedsBuild()):
		return systemctl(ctx, ex, ServiceClient, withKernelLog(`systemctl enable "$unit" && systemctl restart "$unit"`), "restarted")
	case !st.Service.Running() || !st.Service.IsEnabled():
		return systemctl(ctx, ex, ServiceClient, withKernelLog(`systemctl enable --now "$unit"`), "enabled and started")
	default:
		return nil
	}
}

// withKernelLog follows a failed action with the client module's kernel log lines on
// stderr: the module logs why it canceled a mount there, not in the service's journal.
func withKernelLog(action string) string {
	return "{ " + action + "; } || { rc=$?; journalctl -k -n 40 --no-pager -o cat 2>/dev/null | grep -F 'beegfs: ' >&2; (exit $rc); }"
}

// MountedFSType is what `findmnt -n -o FSTYPE PATH` prints, the guide's check
// that BeeGFS is mounted over /home; "" when nothing is mounted there, which is
// the guide's "home directories are missing on one node".
func MountedFSType(ctx context.Context, ex transport.Executor, mountPath string) (string, error) {
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
	return "sec " + mountedFSTypeSection + " findmnt -n -o FSTYPE -- " + transport.Quote(mountPath) + "\n", nil
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
