package beegfs

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Pitfall P9: the client's first mount over /home hides whatever the local /home holds,
// the SSH keys of the account the provider connects as included. What follows checks, and
// on request migrates, that account's home before the mount.

// Account is the login account whose home the first mount must not hide.
type Account struct {
	Name string
	UID  int
	Home string
}

// LookupAccount reads an account from the node's user database.
func LookupAccount(ctx context.Context, ex transport.Executor, name string) (Account, error) {
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
func InspectHome(ctx context.Context, ex transport.Executor, s Staging) (HomeReport, error) {
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
	b.WriteString("inner=" + transport.Quote(transport.SectionFuncs+stagingMount) + "\n")
	b.WriteString(stagingBody)
	return b.String(), nil
}

// stagingBody runs the staging in a private mount namespace (unshare). A failed mount
// adds the client module's kernel log lines, which say why the module canceled it. The
// trap, set before anything else can fail, removes the staging directory on
// every exit, with rmdir only, which cannot delete anything that is still
// mounted there. rsync keeps numeric owners, hard links, ACLs and
// extended attributes (-aHAX --numeric-ids) and never overwrites a file that
// already exists on BeeGFS (--ignore-existing): a migration adds what is
// missing and leaves what other nodes wrote alone.
//
//go:embed staging.sh
var stagingBody string

// stagingMount is the part of the staging that runs in the private namespace, with the
// staging directory, the client configuration, the mount path, the home and whether to
// migrate as its arguments.
//
//go:embed staging_mount.sh
var stagingMount string

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
func GuardFirstMount(ctx context.Context, ex transport.Executor, st ClientState, set ClientSettings, admin string, migrate bool) error {
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
