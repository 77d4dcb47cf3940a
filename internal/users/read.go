package users

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

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

// ShellState is what one node says about a login shell.
type ShellState struct {
	// Executable tells that an executable file is at the path, which a login needs: an
	// account whose shell is missing cannot log in there.
	Executable bool
	// Listed tells that the node's /etc/shells names the path.
	Listed bool
}

// State is the accounts and shells one node was asked about, keyed by name or path.
type State struct {
	Users  map[string]UserState
	Groups map[string]GroupState
	Shells map[string]ShellState
}

// Lookup names what to ask a node: users, groups, and login shells by path.
type Lookup struct {
	Users, Groups, Shells []string
}

// AnswerError is a node's answer that the account tools should not have given: getent failing,
// or output that does not parse. The node was reached and answered, so the fault is on the node,
// unlike a failure of ex.Sudo itself (a connection that ended, a deadline that passed).
type AnswerError struct{ Err error }

func (e *AnswerError) Error() string { return e.Err.Error() }
func (e *AnswerError) Unwrap() error { return e.Err }

// getent's documented exit status for "key not found".
const getentNotFound = 2

// ReadAccounts looks up the given users and groups on one host; see Read.
func ReadAccounts(ctx context.Context, ex transport.Executor, userNames, groupNames []string) (State, error) {
	return Read(ctx, ex, Lookup{Users: userNames, Groups: groupNames})
}

// Read looks up the given users, groups and shells on one host. Every resource of a run reads
// the same listing of the host's account databases, shared within the run (transport.Executor.Read),
// so twenty users cost a host one round trip, not twenty. A name the listing lacks (an account
// to create, or one from an NSS source that does not enumerate, such as sssd by default) is
// then asked of getent by name, in one more round trip, so accounts from any source count. The
// listing also says which of the shells /etc/shells names or an account uses are executable
// files; a shell that is neither is asked in that second round trip.
func Read(ctx context.Context, ex transport.Executor, q Lookup) (State, error) {
	if err := validateLookup(q); err != nil {
		return State{}, err
	}
	st := State{Users: map[string]UserState{}, Groups: map[string]GroupState{}, Shells: map[string]ShellState{}}
	if len(q.Users) == 0 && len(q.Groups) == 0 && len(q.Shells) == 0 {
		return st, nil
	}
	res, err := ex.Read(ctx, listingScript)
	if err != nil {
		return State{}, fmt.Errorf("read accounts: %w", err)
	}
	l, err := parseListing(res.Stdout)
	if err != nil {
		return State{}, &AnswerError{Err: err}
	}
	var ask Lookup
	for _, n := range q.Users {
		if u, ok := l.user(n); ok {
			st.Users[n] = u
		} else {
			ask.Users = append(ask.Users, n)
		}
	}
	for _, n := range q.Groups {
		if g, ok := l.groups[n]; ok {
			st.Groups[n] = GroupState{Exists: true, GID: g.GID, Members: g.Members}
		} else {
			ask.Groups = append(ask.Groups, n)
		}
	}
	for _, s := range q.Shells {
		if sh, ok := l.shells[s]; ok {
			st.Shells[s] = sh
		} else {
			ask.Shells = append(ask.Shells, s)
		}
	}
	if len(ask.Users) == 0 && len(ask.Groups) == 0 && len(ask.Shells) == 0 {
		return st, nil
	}
	res, err = ex.Sudo(ctx, readScript(ask), nil)
	if err != nil {
		return State{}, fmt.Errorf("read accounts: %w", err)
	}
	asked, err := parseAccounts(res.Stdout, ask)
	if err != nil {
		return State{}, &AnswerError{Err: err}
	}
	maps.Copy(st.Users, asked.Users)
	maps.Copy(st.Groups, asked.Groups)
	maps.Copy(st.Shells, asked.Shells)
	return st, nil
}

// listingScript lists the account databases whole, as getent enumerates them, and the UID
// ledger where the host keeps one: the login node's Read of every user and group then learns
// from the one shared listing whether the ledger records it (ReadListedLedger). The shells
// section answers, for each shell /etc/shells names (flag L) and each login shell an account
// has, whether an executable file is there (x) or not (-), with the shell's own tests, so a
// plan checks the shells users commonly have without a command of its own.
var listingScript = transport.NewScript().Text(transport.SectionFuncs).Set("ledger", LedgerPath).Text(listingText).String()

//go:embed listing.sh
var listingText string

// listing is a host's account databases as getent enumerated them.
type listing struct {
	users  map[string]PasswdEntry
	groups map[string]GroupEntry
	// memberOf lists, per user, the GIDs of the groups that name it as a member.
	memberOf map[string][]int64
	byGID    map[int64]string
	shells   map[string]ShellState
}

func parseListing(out []byte) (listing, error) {
	sections, err := transport.ParseSections(out)
	if err != nil {
		return listing{}, fmt.Errorf("read accounts: %w", err)
	}
	l := listing{users: map[string]PasswdEntry{}, groups: map[string]GroupEntry{}, memberOf: map[string][]int64{}, byGID: map[int64]string{},
		shells: map[string]ShellState{}}
	for _, db := range []string{"passwd", "group"} {
		if s, ok := sections[db]; !ok || s.Status != 0 {
			return listing{}, fmt.Errorf("read accounts: getent %s failed (status %d)", db, s.Status)
		}
	}
	for _, line := range sections["passwd"].Lines {
		e, err := ParsePasswdLine(line)
		if err != nil {
			return listing{}, fmt.Errorf("read accounts: %w", err)
		}
		if _, dup := l.users[e.Name]; !dup { // getent answers a name with its first entry
			l.users[e.Name] = e
		}
	}
	for _, line := range sections["group"].Lines {
		e, err := ParseGroupLine(line)
		if err != nil {
			return listing{}, fmt.Errorf("read accounts: %w", err)
		}
		if _, dup := l.groups[e.Name]; dup {
			continue
		}
		l.groups[e.Name] = e
		if _, named := l.byGID[e.GID]; !named {
			l.byGID[e.GID] = e.Name
		}
		for _, m := range e.Members {
			l.memberOf[m] = append(l.memberOf[m], e.GID)
		}
	}
	for _, line := range sections["shells"].Lines {
		flags, shell, ok := strings.Cut(line, " ")
		if !ok || shell == "" {
			return listing{}, fmt.Errorf("read accounts: shells line %q: want FLAGS PATH", line)
		}
		l.shells[shell] = ShellState{Executable: strings.HasPrefix(flags, "x"), Listed: strings.Contains(flags, "L")}
	}
	return l, nil
}

// user is what `getent passwd NAME` and `id -nG NAME` would say of a listed user. id names
// each group by its GID, as getgrgid does (the first group with that GID, or the number when
// none has it): the primary group, then the groups that list the user as a member.
func (l listing) user(name string) (UserState, bool) {
	e, ok := l.users[name]
	if !ok {
		return UserState{}, false
	}
	others := make([]string, len(l.memberOf[name]))
	for i, gid := range l.memberOf[name] {
		others[i] = l.groupName(gid)
	}
	primary := l.groupName(e.GID)
	return UserState{Exists: true, UID: e.UID, GID: e.GID, Shell: e.Shell, Home: e.Home,
		PrimaryGroupName: primary, Groups: supplementary(primary, others)}, true
}

func (l listing) groupName(gid int64) string {
	if name, ok := l.byGID[gid]; ok {
		return name
	}
	return strconv.FormatInt(gid, 10)
}

func validateLookup(q Lookup) error {
	for _, n := range q.Users {
		if err := ValidateName(KindUser, n); err != nil {
			return err
		}
	}
	for _, n := range q.Groups {
		if err := ValidateName(KindGroup, n); err != nil {
			return err
		}
	}
	for _, s := range q.Shells {
		if err := ValidateShell(s); err != nil {
			return err
		}
	}
	return nil
}

var readPrelude = transport.ScriptEnv + transport.SectionFuncs + readFuncs

//go:embed read.sh
var readFuncs string

// readScript asks each name once: a section printed twice fails the read.
func readScript(q Lookup) string {
	var b strings.Builder
	b.WriteString(readPrelude)
	for _, n := range compactNames(q.Users) {
		fmt.Fprintf(&b, "acct_user %s\n", transport.Quote(n))
	}
	for _, n := range compactNames(q.Groups) {
		fmt.Fprintf(&b, "acct_group %s\n", transport.Quote(n))
	}
	for _, s := range compactNames(q.Shells) {
		fmt.Fprintf(&b, "acct_shell %s\n", transport.Quote(s))
	}
	return b.String()
}

func compactNames(names []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(names)))
}

func parseAccounts(out []byte, q Lookup) (State, error) {
	sections, err := transport.ParseSections(out)
	if err != nil {
		return State{}, fmt.Errorf("read accounts: %w", err)
	}
	st := State{Users: map[string]UserState{}, Groups: map[string]GroupState{}, Shells: map[string]ShellState{}}
	for _, n := range q.Users {
		u, err := parseUserSections(n, sections)
		if err != nil {
			return State{}, err
		}
		st.Users[n] = u
	}
	for _, n := range q.Groups {
		g, err := parseGroupSection(n, sections)
		if err != nil {
			return State{}, err
		}
		st.Groups[n] = g
	}
	for _, s := range q.Shells {
		sec, ok := sections["shell "+s]
		if !ok {
			return State{}, fmt.Errorf("read accounts: no answer about shell %s", s)
		}
		// The listing named every path /etc/shells lists, so a shell asked here is not listed.
		st.Shells[s] = ShellState{Executable: sec.Status == 0}
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
