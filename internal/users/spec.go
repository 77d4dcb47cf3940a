package users

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// UserSpec is the desired account, identical on every node.
type UserSpec struct {
	Name         string
	UID          int64
	PrimaryGroup string
	// Groups are supplementary groups; order does not matter.
	Groups []string
	// Shell is left to useradd's default when empty, and then not compared.
	Shell string
	// Home defaults to /home/NAME when empty.
	Home string
}

// HomeDir is the home directory the account record points to.
func (s UserSpec) HomeDir() string {
	if s.Home == "" {
		return "/home/" + s.Name
	}
	return s.Home
}

// SupplementaryGroups is Groups sorted, deduplicated and without the primary
// group, which is how ReadAccounts reports them, so the two compare directly.
func (s UserSpec) SupplementaryGroups() []string {
	return supplementary(s.PrimaryGroup, s.Groups)
}

// Validate checks every field before anything reaches a host.
func (s UserSpec) Validate(allowSystemUID bool) error {
	if err := ValidateName(KindUser, s.Name); err != nil {
		return err
	}
	if err := ValidateID(KindUser, s.UID, allowSystemUID); err != nil {
		return fmt.Errorf("user %s: %w", s.Name, err)
	}
	if s.PrimaryGroup == "" {
		return fmt.Errorf("user %s: a primary group is required", s.Name)
	}
	for _, g := range append([]string{s.PrimaryGroup}, s.Groups...) {
		if err := ValidateName(KindGroup, g); err != nil {
			return fmt.Errorf("user %s: %w", s.Name, err)
		}
	}
	if s.Shell != "" {
		if err := ValidateShell(s.Shell); err != nil {
			return fmt.Errorf("user %s: %w", s.Name, err)
		}
	}
	if err := ValidateHome(s.HomeDir()); err != nil {
		return fmt.Errorf("user %s: %w", s.Name, err)
	}
	return nil
}

// Diff describes how one node's account differs from the spec, one message
// per difference, naming the node: "uid 1002 on gpu02, want 1001".
func Diff(node string, spec UserSpec, observed UserState) []string {
	if !observed.Exists {
		return []string{"missing on " + node}
	}
	var out []string
	if observed.UID != spec.UID {
		out = append(out, fmt.Sprintf("uid %d on %s, want %d", observed.UID, node, spec.UID))
	}
	if observed.PrimaryGroupName != spec.PrimaryGroup {
		out = append(out, fmt.Sprintf("primary group %s on %s, want %s", observed.PrimaryGroupName, node, spec.PrimaryGroup))
	}
	if want := spec.SupplementaryGroups(); !slices.Equal(observed.Groups, want) {
		out = append(out, fmt.Sprintf("groups %v on %s, want %v", observed.Groups, node, want))
	}
	if spec.Shell != "" && observed.Shell != spec.Shell {
		out = append(out, fmt.Sprintf("shell %s on %s, want %s", observed.Shell, node, spec.Shell))
	}
	if observed.Home != spec.HomeDir() {
		out = append(out, fmt.Sprintf("home %s on %s, want %s", observed.Home, node, spec.HomeDir()))
	}
	return out
}

// DiffGroup is Diff for a group. Members are not compared: they belong to the
// users that list the group.
func DiffGroup(node, name string, gid int64, observed GroupState) []string {
	if !observed.Exists {
		return []string{"missing on " + node}
	}
	if observed.GID != gid {
		return []string{fmt.Sprintf("gid %d on %s, want %d", observed.GID, node, gid)}
	}
	return nil
}

// AgreedUID returns the uid a user has on every node, for import. It fails
// when the account is missing somewhere or the uids differ, naming each
// node's uid so the admin sees which node to fix.
func AgreedUID(name string, byNode map[string]UserState) (int64, error) {
	nodes := slices.Sorted(maps.Keys(byNode))
	if len(nodes) == 0 {
		return 0, fmt.Errorf("user %s: no nodes to read it from", name)
	}
	var parts []string
	var missing []string
	uids := map[int64]bool{}
	for _, n := range nodes {
		st := byNode[n]
		if !st.Exists {
			missing = append(missing, n)
			continue
		}
		uids[st.UID] = true
		parts = append(parts, fmt.Sprintf("%s %d", n, st.UID))
	}
	switch {
	case len(missing) > 0:
		return 0, fmt.Errorf("user %s does not exist on %s", name, strings.Join(missing, ", "))
	case len(uids) > 1:
		return 0, fmt.Errorf("user %s has different uids across nodes (%s); make them equal before importing",
			name, strings.Join(parts, ", "))
	}
	return byNode[nodes[0]].UID, nil
}

// AdoptionChanges says, one phrase per change, what making an existing account match spec does
// to it: "leaves groups sudo, video", "primary group admin becomes users". Taking over an account
// someone made by hand must not silently cost it group memberships, so the plan shows these.
func AdoptionChanges(spec UserSpec, observed UserState) []string {
	if !observed.Exists {
		return nil
	}
	var out []string
	want := spec.SupplementaryGroups()
	if left := without(observed.Groups, want); len(left) > 0 {
		out = append(out, "leaves groups "+strings.Join(left, ", "))
	}
	if joined := without(want, observed.Groups); len(joined) > 0 {
		out = append(out, "joins groups "+strings.Join(joined, ", "))
	}
	if observed.PrimaryGroupName != spec.PrimaryGroup {
		out = append(out, fmt.Sprintf("primary group %s becomes %s", observed.PrimaryGroupName, spec.PrimaryGroup))
	}
	if spec.Shell != "" && observed.Shell != spec.Shell {
		out = append(out, fmt.Sprintf("shell %s becomes %s", observed.Shell, spec.Shell))
	}
	if observed.Home != spec.HomeDir() {
		out = append(out, fmt.Sprintf("home %s becomes %s (the directory is not moved)", observed.Home, spec.HomeDir()))
	}
	return out
}

// without lists the entries of a that b lacks.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
