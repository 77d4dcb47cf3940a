package slurm

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Status is the controller's fragments and installed slurmctld as one round trip finds them.
type Status struct {
	Fragments Fragments
	// Version is nil when slurmctld is not installed.
	Version *version.Version
	// Runtime is every node slurmctld knows, nil while it does not answer.
	Runtime map[string]NodeRuntime
	// DebianPlugstack: plugstack.conf is Debian's, whose include fails at every start of
	// slurmctld; QuietPlugstack replaces it.
	DebianPlugstack bool
	// Adopted: FragmentDir holds no fragment, and Fragments were read from the hand-written
	// files slurmctld runs with (AdoptFiles).
	Adopted bool
	// NamesHealthCheck: the slurm.conf slurmctld runs with names HealthCheckPath, so the nodes
	// may hold the program.
	NamesHealthCheck bool
}

// ReadStatus reads the controller's Status.
func ReadStatus(ctx context.Context, ex transport.Executor) (Status, error) {
	st, err := readState(ctx, ex)
	if err != nil {
		return Status{}, err
	}
	fragments, err := ParseFragments(st.fragments)
	if err != nil {
		return Status{}, err
	}
	return Status{Fragments: fragments, Version: st.version, Runtime: st.runtime, DebianPlugstack: st.debianPlugstack, Adopted: st.adopted,
		NamesHealthCheck: NamesHealthCheck(st.files.SlurmConf)}, nil
}

//go:embed stop_controller.sh
var stopController string

// StopController stops and disables slurmctld and removes the files assembled for it; the
// node and partition fragments stay, as their resources own them. A controller without
// slurmctld installed has nothing to stop; a stop that fails is an error, not ignored.
func StopController(ctx context.Context, ex transport.Executor) error {
	files := make([]string, len(confFiles))
	for i, f := range confFiles {
		files[i] = ConfDir + "/" + f
	}
	script := transport.NewScript().Args(files...).Text(stopController).String()
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("stop slurmctld: %w", err)
	}
	return nil
}

// MungeError is a host where a credential munged makes does not decode (pitfall P10):
// slurmctld and slurmd authenticate every message with MUNGE, so they must not start there.
type MungeError struct{ Err error }

func (e *MungeError) Error() string {
	return "munge -n | unmunge failed, so munged does not run there (with a key): " + e.Err.Error()
}

func (e *MungeError) Unwrap() error { return e.Err }

// CheckMunge makes and decodes a credential on the host, the guide's check that munged runs.
func CheckMunge(ctx context.Context, ex transport.Executor) error {
	script := transport.ScriptEnv + checkMunge
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return &MungeError{Err: err}
	}
	return nil
}

//go:embed check_munge.sh
var checkMunge string

// SettingClass is the class of change that changing a slurm.conf setting
// needs, from the same table Classify uses, so documentation generated
// from it cannot disagree with what an apply does.
func SettingClass(key string) ChangeClass {
	return settingClass(strings.ToLower(key))
}

// SettingsOfClass lists, sorted, the settings whose change needs class (a restart of
// slurmctld or an ordered restart), for documentation generated from the table itself.
func SettingsOfClass(class ChangeClass) []string {
	var table map[string]string
	switch class {
	case RestartController:
		table = controllerRestartKeys
	case OrderedRestart:
		table = allDaemonsRestartKeys
	}
	keys := make([]string, 0, len(table))
	for _, k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Line classes: a node line's change changes the node set (Classify's
// ordered restart); a partition line or cgroup.conf, gres.conf change is a
// reconfigure.
const (
	NodeLineClass      = OrderedRestart
	PartitionLineClass = Reconfigure
	CgroupConfClass    = Reconfigure
)

// EnsureStateDir creates StateSaveLocation owned by SlurmUser when it is missing: Debian's
// package makes /var/lib/slurm/slurmctld, not the guide's /var/spool/slurmctld, and
// slurmctld, running as SlurmUser, cannot create it under /var/spool itself. An existing
// directory is left as it is.
func EnsureStateDir(ctx context.Context, ex transport.Executor, s ControllerSettings) error {
	dir, user := s.StateSaveLocation, s.SlurmUser
	if dir == "" {
		return nil
	}
	if !strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") {
		return fmt.Errorf("StateSaveLocation %q: want an absolute path", dir)
	}
	if user == "" {
		user = "root"
	}
	if !transport.AccountNamePattern.MatchString(user) {
		return fmt.Errorf("SlurmUser %q is not a user name", user)
	}
	script := transport.ScriptEnv + "[ -d " + transport.Quote(dir) + " ] || install -d -m 0755 -o " + transport.Quote(user) + " -g " + transport.Quote(user) + " -- " + transport.Quote(dir)
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("create StateSaveLocation %s: %w", dir, err)
	}
	return nil
}

// PlugstackPath is SPANK's plugin list, which slurmctld reads at every start and serves to
// configless nodes.
const PlugstackPath = ConfDir + "/plugstack.conf"

// debianPlugstack is the plugstack.conf Debian's slurm-wlm-basic-plugins ships. Debian's Slurm
// is built without glob support, so the include fails even with plugins in the directory,
// and slurmctld logs `"Include" failed in file /etc/slurm/plugstack.conf line 1` at every start.
const debianPlugstack = "include /etc/slurm/plugstack.conf.d/*.conf\n"

// quietPlugstack replaces debianPlugstack: no plugins, said in a comment, which Slurm skips.
const quietPlugstack = "# Written by gpucluster in place of Debian's \"include " + ConfDir + "/plugstack.conf.d/*.conf\", which this\n" +
	"# Slurm cannot read (it is built without glob support): list each SPANK plugin here instead.\n"

// plugstackScript reads plugstack.conf for readState.
var plugstackScript = "if [ -e " + transport.Quote(PlugstackPath) + " ]; then sec plugstack base64 -w0 -- " + transport.Quote(PlugstackPath) +
	"; else secv plugstack " + fmt.Sprint(missingFile) + "; fi\n"

// debianPlugstackIn reports whether the plugstack section holds Debian's failing include.
func debianPlugstackIn(sec transport.Section) bool {
	if sec.Status != 0 {
		return false
	}
	b, err := decodeSection(PlugstackPath, sec)
	return err == nil && string(b) == debianPlugstack
}

// QuietPlugstack replaces Debian's plugstack.conf, and only that exact file, with one that
// lists no plugin: one an administrator edited is theirs. The write is conditional on the
// content read, so an edit made meanwhile is never overwritten.
func QuietPlugstack(ctx context.Context, h ControllerHost) error {
	st, err := readState(ctx, h)
	if err != nil {
		return err
	}
	return replaceDebianPlugstack(ctx, h, st)
}

// replaceDebianPlugstack is QuietPlugstack on the state already read. It changes nothing Slurm runs
// with: Debian's include loads no plugin either, it only fails at every start.
func replaceDebianPlugstack(ctx context.Context, h ControllerHost, st state) error {
	if !st.debianPlugstack {
		return nil
	}
	f := configFile(PlugstackPath, []byte(quietPlugstack))
	f.ExpectSHA256 = expectedSHA256([]byte(debianPlugstack), true)
	if _, err := h.WriteFile(ctx, f); err != nil {
		return fmt.Errorf("replace Debian's %s: %w", PlugstackPath, err)
	}
	return nil
}
