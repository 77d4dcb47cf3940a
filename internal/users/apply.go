package users

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

const scriptPrelude = "set -eu\n" + transport.ScriptEnv

// UserCommands are the commands that turn observed into spec on one node,
// none when it is already in sync. Accounts are made without a home
// directory (-M): homes live on shared storage and are made once, by
// CreateHome. `usermod -u` also re-owns files under an existing home that
// still carry the old uid, which is exactly what repairing a drift needs.
func UserCommands(spec UserSpec, observed UserState) []string {
	if !observed.Exists {
		args := []string{"useradd", "-M", "-u", strconv.FormatInt(spec.UID, 10), "-g", transport.Quote(spec.PrimaryGroup)}
		if groups := spec.SupplementaryGroups(); len(groups) > 0 {
			args = append(args, "-G", transport.Quote(strings.Join(groups, ",")))
		}
		if spec.Shell != "" {
			args = append(args, "-s", transport.Quote(spec.Shell))
		}
		args = append(args, "-d", transport.Quote(spec.HomeDir()), transport.Quote(spec.Name))
		return []string{strings.Join(args, " ")}
	}
	var flags []string
	if observed.UID != spec.UID {
		flags = append(flags, "-u", strconv.FormatInt(spec.UID, 10))
	}
	if observed.PrimaryGroupName != spec.PrimaryGroup {
		flags = append(flags, "-g", transport.Quote(spec.PrimaryGroup))
	}
	if groups := spec.SupplementaryGroups(); !slices.Equal(observed.Groups, groups) {
		flags = append(flags, "-G", transport.Quote(strings.Join(groups, ",")))
	}
	if spec.Shell != "" && observed.Shell != spec.Shell {
		flags = append(flags, "-s", transport.Quote(spec.Shell))
	}
	// -d without -m changes only the record, never moves the directory.
	if observed.Home != spec.HomeDir() {
		flags = append(flags, "-d", transport.Quote(spec.HomeDir()))
	}
	if len(flags) == 0 {
		return nil
	}
	return []string{"usermod " + strings.Join(flags, " ") + " " + transport.Quote(spec.Name)}
}

// GroupCommands are the commands that turn observed into the wanted group.
func GroupCommands(name string, gid int64, observed GroupState) []string {
	id := strconv.FormatInt(gid, 10)
	switch {
	case !observed.Exists:
		return []string{"groupadd -g " + id + " " + transport.Quote(name)}
	case observed.GID != gid:
		return []string{"groupmod -g " + id + " " + transport.Quote(name)}
	}
	return nil
}

// EnsureUser brings one node's account to spec: one round trip when it is
// already in sync, two when it is changed.
func EnsureUser(ctx context.Context, ex Executor, spec UserSpec) (changed bool, err error) {
	if err := spec.Validate(true); err != nil {
		return false, err
	}
	st, err := ReadAccounts(ctx, ex, []string{spec.Name}, nil)
	if err != nil {
		return false, fmt.Errorf("user %s: %w", spec.Name, err)
	}
	return runCommands(ctx, ex, "user "+spec.Name, UserCommands(spec, st.Users[spec.Name]))
}

// EnsureGroup brings one node's group to the wanted gid, creating it if
// needed.
func EnsureGroup(ctx context.Context, ex Executor, name string, gid int64) (changed bool, err error) {
	if err := ValidateName(KindGroup, name); err != nil {
		return false, err
	}
	if err := ValidateID(KindGroup, gid, true); err != nil {
		return false, fmt.Errorf("group %s: %w", name, err)
	}
	st, err := ReadAccounts(ctx, ex, nil, []string{name})
	if err != nil {
		return false, fmt.Errorf("group %s: %w", name, err)
	}
	return runCommands(ctx, ex, "group "+name, GroupCommands(name, gid, st.Groups[name]))
}

// RemoveUser deletes the account record, never the home directory (no -r):
// the home is shared, and a retired user's files stay with their UID. An
// account that is already gone is success.
func RemoveUser(ctx context.Context, ex Executor, name string) (removed bool, err error) {
	if err := ValidateName(KindUser, name); err != nil {
		return false, err
	}
	q := transport.Quote(name)
	// Debian's USERGROUPS_ENAB makes userdel delete a group named like the user when it is the
	// user's primary group, and userdel has no flag against it; that group may be managed on
	// its own, so it is put back with its GID.
	command := "gid=$(getent group " + q + " | cut -d: -f3)\n\tuserdel " + q +
		"\n\tif [ -n \"$gid\" ] && ! getent group " + q + " >/dev/null; then groupadd -g \"$gid\" " + q + "; fi"
	return runIfPresent(ctx, ex, "user "+name, "getent passwd "+q, command)
}

// RemoveGroup deletes a group; a group that is already gone is success.
// groupdel itself refuses while the group is some user's primary group.
func RemoveGroup(ctx context.Context, ex Executor, name string) (removed bool, err error) {
	if err := ValidateName(KindGroup, name); err != nil {
		return false, err
	}
	return runIfPresent(ctx, ex, "group "+name, "getent group "+transport.Quote(name), "groupdel "+transport.Quote(name))
}

func runIfPresent(ctx context.Context, ex Executor, what, probe, command string) (bool, error) {
	script := scriptPrelude + "if " + probe + " >/dev/null; then\n\t" + command + "\n\techo removed\nfi\n"
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", what, err)
	}
	removed := strings.TrimSpace(string(res.Stdout)) == "removed"
	if removed {
		transport.Changed(ctx, ex, "removed "+what)
	}
	return removed, nil
}

func runCommands(ctx context.Context, ex Executor, what string, commands []string) (bool, error) {
	if len(commands) == 0 {
		return false, nil
	}
	if _, err := ex.Sudo(ctx, scriptPrelude+strings.Join(commands, "\n")+"\n", nil); err != nil {
		return false, fmt.Errorf("%s: %s: %w", what, strings.Join(commands, "; "), err)
	}
	transport.Changed(ctx, ex, "ran "+strings.Join(commands, "; "))
	return true, nil
}

// CreateHome makes the user's home directory on the one node that should
// hold it (shared storage), only if nothing exists at that path yet: owned
// by the user's uid and primary group, mode 0700, seeded from /etc/skel.
// An existing directory is never touched, so re-running is harmless.
func CreateHome(ctx context.Context, ex Executor, spec UserSpec) (created bool, err error) {
	if err := spec.Validate(true); err != nil {
		return false, err
	}
	script := scriptPrelude + "home=" + transport.Quote(spec.HomeDir()) + "\n" +
		"owner=" + strconv.FormatInt(spec.UID, 10) + ":" + transport.Quote(spec.PrimaryGroup) + "\n" + createHomeBody
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return false, fmt.Errorf("create home %s for %s: %w", spec.HomeDir(), spec.Name, err)
	}
	created = strings.TrimSpace(string(res.Stdout)) == "created"
	if created {
		transport.Changed(ctx, ex, "created home "+spec.HomeDir()+" for "+spec.Name)
	}
	return created, nil
}

// A symlink at the path counts as existing: following it could hand the
// user some other directory.
const createHomeBody = `if [ -e "$home" ] || [ -L "$home" ]; then echo exists; exit 0; fi
mkdir -p -- "$(dirname -- "$home")"
mkdir -m 0700 -- "$home"
if [ -d /etc/skel ]; then cp -a /etc/skel/. "$home"/; fi
chown -R -- "$owner" "$home"
chmod 0700 -- "$home"
echo created
`
