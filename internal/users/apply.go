package users

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// UserCommands are the commands that turn observed into spec on one node,
// none when it is already in sync. Accounts are made without a home
// directory (-M): homes live on shared storage and are made once, by
// CreateHome. `usermod -u` also re-owns files under an existing home that
// still carry the old uid, which is exactly what repairing a drift needs.
func UserCommands(spec UserSpec, observed UserState) []string {
	if !observed.Exists {
		args := []string{"useradd", "-M", "-u", strconv.FormatInt(spec.UID, 10), "-g", spec.PrimaryGroup}
		if groups := spec.SupplementaryGroups(); len(groups) > 0 {
			args = append(args, "-G", strings.Join(groups, ","))
		}
		if spec.Shell != "" {
			args = append(args, "-s", spec.Shell)
		}
		args = append(args, "-d", spec.HomeDir(), spec.Name)
		return []string{transport.Command(args...)}
	}
	args := []string{"usermod"}
	if observed.UID != spec.UID {
		args = append(args, "-u", strconv.FormatInt(spec.UID, 10))
	}
	if observed.PrimaryGroupName != spec.PrimaryGroup {
		args = append(args, "-g", spec.PrimaryGroup)
	}
	if groups := spec.SupplementaryGroups(); !slices.Equal(observed.Groups, groups) {
		args = append(args, "-G", strings.Join(groups, ","))
	}
	if spec.Shell != "" && observed.Shell != spec.Shell {
		args = append(args, "-s", spec.Shell)
	}
	// -d without -m changes only the record, never moves the directory.
	if observed.Home != spec.HomeDir() {
		args = append(args, "-d", spec.HomeDir())
	}
	if len(args) == 1 {
		return nil
	}
	return []string{transport.Command(append(args, spec.Name)...)}
}

// GroupCommands are the commands that turn observed into the wanted group.
func GroupCommands(name string, gid int64, observed GroupState) []string {
	id := strconv.FormatInt(gid, 10)
	switch {
	case !observed.Exists:
		return []string{transport.Command("groupadd", "-g", id, name)}
	case observed.GID != gid:
		return []string{transport.Command("groupmod", "-g", id, name)}
	}
	return nil
}

// newScript starts every script of the package: a failed command ends it, so
// nothing runs after a refused useradd.
func newScript() *transport.Script { return transport.NewScript().Text("set -e") }

// EnsureUser brings one node's account to spec: one round trip when it is
// already in sync, two when it is changed.
func EnsureUser(ctx context.Context, ex transport.Executor, spec UserSpec) (changed bool, err error) {
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
func EnsureGroup(ctx context.Context, ex transport.Executor, name string, gid int64) (changed bool, err error) {
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
func RemoveUser(ctx context.Context, ex transport.Executor, name string) (removed bool, err error) {
	if err := ValidateName(KindUser, name); err != nil {
		return false, err
	}
	// Debian's USERGROUPS_ENAB makes userdel delete a group named like the user when it is the
	// user's primary group, and userdel has no flag against it; that group may be managed on
	// its own, so it is put back with its GID.
	return removeIfPresent(ctx, ex, "user", name, removeUserText)
}

// RemoveGroup deletes a group; a group that is already gone is success.
// groupdel itself refuses while the group is some user's primary group.
func RemoveGroup(ctx context.Context, ex transport.Executor, name string) (removed bool, err error) {
	if err := ValidateName(KindGroup, name); err != nil {
		return false, err
	}
	return removeIfPresent(ctx, ex, "group", name, removeGroupText)
}

//go:embed remove_user.sh
var removeUserText string

//go:embed remove_group.sh
var removeGroupText string

// removeIfPresent runs text, which removes the account "$name" where it exists and then says
// "removed".
func removeIfPresent(ctx context.Context, ex transport.Executor, kind Kind, name, text string) (bool, error) {
	what := string(kind) + " " + name
	script := newScript().Set("name", name).Text(text).String()
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

func runCommands(ctx context.Context, ex transport.Executor, what string, commands []string) (bool, error) {
	if len(commands) == 0 {
		return false, nil
	}
	if _, err := ex.Sudo(ctx, newScript().Text(strings.Join(commands, "\n")).String(), nil); err != nil {
		return false, fmt.Errorf("%s: %s: %w", what, strings.Join(commands, "; "), err)
	}
	transport.Changed(ctx, ex, "ran "+strings.Join(commands, "; "))
	return true, nil
}

// CreateHome makes the user's home directory on the one node that should
// hold it (shared storage), only if nothing exists at that path yet: owned
// by the user's uid and primary group, mode 0700, seeded from /etc/skel.
// An existing directory is never touched, so re-running is harmless.
func CreateHome(ctx context.Context, ex transport.Executor, spec UserSpec) (created bool, err error) {
	if err := spec.Validate(true); err != nil {
		return false, err
	}
	script := newScript().Set("home", spec.HomeDir()).Set("owner", strconv.FormatInt(spec.UID, 10)+":"+spec.PrimaryGroup).
		Text(createHomeBody).String()
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
//
//go:embed create_home.sh
var createHomeBody string
