package users

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Executor runs a script as root on one host.
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error)
}

// UserState is what one node says about one user.
type UserState struct {
	Exists           bool
	UID              int64
	GID              int64
	PrimaryGroupName string
	// Groups are the supplementary groups, sorted, without the primary group.
	Groups []string
	Shell  string
	Home   string
}

// GroupState is what one node says about one group.
type GroupState struct {
	Exists  bool
	GID     int64
	Members []string
}

// State is the accounts one node was asked about, keyed by name.
type State struct {
	Users  map[string]UserState
	Groups map[string]GroupState
}

// getent's documented exit status for "key not found".
const getentNotFound = 2

// ReadAccounts looks up the given users and groups on one host in a single
// round trip. It goes through getent, so accounts from any NSS source count.
func ReadAccounts(ctx context.Context, ex Executor, userNames, groupNames []string) (State, error) {
	if err := validateNames(userNames, groupNames); err != nil {
		return State{}, err
	}
	if len(userNames) == 0 && len(groupNames) == 0 {
		return State{Users: map[string]UserState{}, Groups: map[string]GroupState{}}, nil
	}
	res, err := ex.Sudo(ctx, readScript(userNames, groupNames), nil)
	if err != nil {
		return State{}, fmt.Errorf("read accounts: %w", err)
	}
	return parseAccounts(res.Stdout, userNames, groupNames)
}

func validateNames(userNames, groupNames []string) error {
	for _, n := range userNames {
		if err := ValidateName(KindUser, n); err != nil {
			return err
		}
	}
	for _, n := range groupNames {
		if err := ValidateName(KindGroup, n); err != nil {
			return err
		}
	}
	return nil
}

const readPrelude = transport.ScriptEnv + transport.SectionFuncs + `acct_user() {
	sec "passwd $1"; getent passwd "$1"; end $?
	sec "groups $1"; id -nG "$1" 2>/dev/null; end $?
}
acct_group() {
	sec "group $1"; getent group "$1"; end $?
}
`

func readScript(userNames, groupNames []string) string {
	var b strings.Builder
	b.WriteString(readPrelude)
	for _, n := range userNames {
		fmt.Fprintf(&b, "acct_user %s\n", transport.Quote(n))
	}
	for _, n := range groupNames {
		fmt.Fprintf(&b, "acct_group %s\n", transport.Quote(n))
	}
	return b.String()
}

func parseAccounts(out []byte, userNames, groupNames []string) (State, error) {
	sections, err := transport.ParseSections(out)
	if err != nil {
		return State{}, fmt.Errorf("read accounts: %w", err)
	}
	st := State{Users: map[string]UserState{}, Groups: map[string]GroupState{}}
	for _, n := range userNames {
		u, err := parseUserSections(n, sections)
		if err != nil {
			return State{}, err
		}
		st.Users[n] = u
	}
	for _, n := range groupNames {
		g, err := parseGroupSection(n, sections)
		if err != nil {
			return State{}, err
		}
		st.Groups[n] = g
	}
	return st, nil
}

func parseUserSections(name string, sections map[string]transport.Section) (UserState, error) {
	pw, err := lookup(sections, "passwd", name)
	if err != nil || pw == nil {
		return UserState{}, err
	}
	e, err := ParsePasswdLine(pw[0])
	if err != nil {
		return UserState{}, fmt.Errorf("user %s: %w", name, err)
	}
	u := UserState{Exists: true, UID: e.UID, GID: e.GID, Shell: e.Shell, Home: e.Home}
	// id -G lists the primary group first; an unnamed gid shows as a number
	// (with a non-zero status), which is still the best name there is.
	if g, ok := sections["groups "+name]; ok && len(g.Lines) > 0 {
		all := strings.Fields(g.Lines[0])
		if len(all) > 0 {
			u.PrimaryGroupName = all[0]
			u.Groups = supplementary(all[0], all[1:])
		}
	}
	return u, nil
}

func supplementary(primary string, names []string) []string {
	var out []string
	for _, n := range names {
		if n != primary && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func parseGroupSection(name string, sections map[string]transport.Section) (GroupState, error) {
	lines, err := lookup(sections, "group", name)
	if err != nil || lines == nil {
		return GroupState{}, err
	}
	e, err := ParseGroupLine(lines[0])
	if err != nil {
		return GroupState{}, fmt.Errorf("group %s: %w", name, err)
	}
	return GroupState{Exists: true, GID: e.GID, Members: e.Members}, nil
}

// lookup returns the getent lines for one key, nil when getent said the key
// does not exist.
func lookup(sections map[string]transport.Section, db, name string) ([]string, error) {
	s, ok := sections[db+" "+name]
	switch {
	case !ok:
		return nil, fmt.Errorf("read accounts: no getent %s output for %s", db, name)
	case s.Status == getentNotFound:
		return nil, nil
	case s.Status != 0:
		return nil, fmt.Errorf("read accounts: getent %s %s exited with status %d", db, name, s.Status)
	case len(s.Lines) == 0:
		return nil, fmt.Errorf("read accounts: getent %s %s printed nothing", db, name)
	}
	return s.Lines, nil
}
