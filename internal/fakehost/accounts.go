package fakehost

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Accounts live in /etc/passwd and /etc/group, as on Debian with files as the only NSS source,
// so a test edits them as an administrator would and getent sees what the tools wrote. The
// tools follow shadow-utils' exit statuses and messages as Debian ships them, with
// USERGROUPS_ENAB on.
const (
	passwdPath = "/etc/passwd"
	groupPath  = "/etc/group"
)

// User is one /etc/passwd entry.
type User struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
}

// Group is one /etc/group entry.
type Group struct {
	Name    string
	GID     int
	Members []string
}

func (u User) line() string {
	return strings.Join([]string{u.Name, "x", strconv.Itoa(u.UID), strconv.Itoa(u.GID), u.Gecos, u.Home, u.Shell}, ":")
}

func (g Group) line() string {
	return strings.Join([]string{g.Name, "x", strconv.Itoa(g.GID), strings.Join(g.Members, ",")}, ":")
}

// Users reads /etc/passwd; lines that do not parse are skipped, as getent skips them.
func (h *Host) Users() []User {
	data, _ := h.FS.ReadFile(passwdPath)
	var out []User
	for _, l := range lines(data) {
		f := strings.Split(l, ":")
		if len(f) != 7 {
			continue
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, User{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]})
	}
	return out
}

// Groups reads /etc/group.
func (h *Host) Groups() []Group {
	data, _ := h.FS.ReadFile(groupPath)
	var out []Group
	for _, l := range lines(data) {
		f := strings.Split(l, ":")
		if len(f) != 4 {
			continue
		}
		gid, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		var members []string
		if f[3] != "" {
			members = strings.Split(f[3], ",")
		}
		out = append(out, Group{Name: f[0], GID: gid, Members: members})
	}
	return out
}

// User finds a user by name.
func (h *Host) User(name string) (User, bool) {
	for _, u := range h.Users() {
		if u.Name == name {
			return u, true
		}
	}
	return User{}, false
}

// Group finds a group by name.
func (h *Host) Group(name string) (Group, bool) {
	for _, g := range h.Groups() {
		if g.Name == name {
			return g, true
		}
	}
	return Group{}, false
}

func (h *Host) writeUsers(users []User) error {
	var b strings.Builder
	for _, u := range users {
		b.WriteString(u.line() + "\n")
	}
	return h.FS.WriteFile(passwdPath, []byte(b.String()), 0o644)
}

func (h *Host) writeGroups(groups []Group) error {
	var b strings.Builder
	for _, g := range groups {
		b.WriteString(g.line() + "\n")
	}
	return h.FS.WriteFile(groupPath, []byte(b.String()), 0o644)
}

// findGroup finds a group by name or, for a number, by GID.
func findGroup(groups []Group, key string) (int, bool) {
	for i, g := range groups {
		if g.Name == key {
			return i, true
		}
	}
	if gid, err := strconv.Atoi(key); err == nil {
		for i, g := range groups {
			if g.GID == gid {
				return i, true
			}
		}
	}
	return -1, false
}

func findUser(users []User, key string) (int, bool) {
	for i, u := range users {
		if u.Name == key {
			return i, true
		}
	}
	if uid, err := strconv.Atoi(key); err == nil {
		for i, u := range users {
			if u.UID == uid {
				return i, true
			}
		}
	}
	return -1, false
}

// owner parses chown's OWNER[:GROUP] (either may be empty) into ids, -1 for one not given.
func (h *Host) owner(spec string) (uid, gid int, err error) {
	user, group, _ := strings.Cut(spec, ":")
	uid, gid = -1, -1
	if user != "" {
		i, ok := findUser(h.Users(), user)
		if !ok {
			return 0, 0, fmt.Errorf("invalid user: '%s'", spec)
		}
		uid = h.Users()[i].UID
	}
	if group != "" {
		i, ok := findGroup(h.Groups(), group)
		if !ok {
			return 0, 0, fmt.Errorf("invalid group: '%s'", spec)
		}
		gid = h.Groups()[i].GID
	}
	return uid, gid, nil
}

func accountCommands() map[string]Command {
	return map[string]Command{
		"getent": getent, "id": id,
		"useradd": useradd, "usermod": usermod, "userdel": userdel,
		"groupadd": groupadd, "groupmod": groupmod, "groupdel": groupdel,
	}
}

// getent knows the passwd and group databases; a key is a name or an id. Exit 2 when a key is
// not found.
func getent(c *Call) int {
	if len(c.Args) < 2 {
		return c.Errorf(1, "wrong number of arguments")
	}
	db, keys := c.Args[1], c.Args[2:]
	type entry struct{ name, id, line string }
	var entries []entry
	switch db {
	case "passwd":
		for _, u := range c.Host.Users() {
			entries = append(entries, entry{u.Name, strconv.Itoa(u.UID), u.line()})
		}
	case "group":
		for _, g := range c.Host.Groups() {
			entries = append(entries, entry{g.Name, strconv.Itoa(g.GID), g.line()})
		}
	default:
		return c.NotModelled("getent database " + db)
	}
	if len(keys) == 0 {
		for _, e := range entries {
			c.Println(e.line)
		}
		return 0
	}
	status := 0
	for _, k := range keys {
		// A name is looked up first, then a number as an id, as glibc's getent does.
		i := slices.IndexFunc(entries, func(e entry) bool { return e.name == k })
		if i < 0 {
			i = slices.IndexFunc(entries, func(e entry) bool { return e.id == k })
		}
		if i < 0 {
			status = 2
			continue
		}
		c.Println(entries[i].line)
	}
	return status
}

// id prints ids and group names of a user: -u, -g, -G, -nG, -un, -gn.
func id(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "ugGn", "", nil)
	if !ok {
		return 127
	}
	if len(operands) == 0 {
		operands = []string{"root"}
		if v := c.Env.Get("USER"); v.IsSet() && v.String() != "" {
			operands = []string{v.String()}
		}
	}
	if len(operands) != 1 {
		return c.NotModelled("id of more than one user")
	}
	users, groups := c.Host.Users(), c.Host.Groups()
	i, found := findUser(users, operands[0])
	if !found {
		return c.Errorf(1, "'%s': no such user", operands[0])
	}
	u := users[i]
	nameOf := func(gid int) (string, bool) {
		for _, g := range groups {
			if g.GID == gid {
				return g.Name, true
			}
		}
		return strconv.Itoa(gid), false
	}
	switch {
	case f.has('u') && f.has('n'):
		c.Println(u.Name)
	case f.has('u'):
		c.Println(u.UID)
	case f.has('g') && f.has('n'):
		n, _ := nameOf(u.GID)
		c.Println(n)
	case f.has('g'):
		c.Println(u.GID)
	case f.has('G'):
		gids := []int{u.GID}
		for _, g := range groups {
			if slices.Contains(g.Members, u.Name) && !slices.Contains(gids, g.GID) {
				gids = append(gids, g.GID)
			}
		}
		status := 0
		out := make([]string, len(gids))
		for i, gid := range gids {
			out[i] = strconv.Itoa(gid)
			if f.has('n') {
				var named bool
				if out[i], named = nameOf(gid); !named {
					c.Errorf(1, "cannot find name for group ID %d", gid)
					status = 1
				}
			}
		}
		c.Println(strings.Join(out, " "))
		return status
	default:
		return c.NotModelled("id without -u, -g or -G")
	}
	return 0
}

func useradd(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "MmNor", "ugGsdc", nil)
	if !ok {
		return 127
	}
	if len(operands) != 1 {
		return c.Errorf(2, "invalid usage")
	}
	name := operands[0]
	users, groups := c.Host.Users(), c.Host.Groups()
	if indexOf(users, name) >= 0 {
		return c.Errorf(9, "user '%s' already exists", name)
	}
	uid := nextID(f['u'], 1000, func(id int) bool { return slices.ContainsFunc(users, func(u User) bool { return u.UID == id }) })
	if f.has('u') && !f.has('o') && slices.ContainsFunc(users, func(u User) bool { return u.UID == uid }) {
		return c.Errorf(4, "UID %d is not unique", uid)
	}
	var gid int
	if f.has('g') {
		i, ok := findGroup(groups, f['g'])
		if !ok {
			return c.Errorf(6, "group '%s' does not exist", f['g'])
		}
		gid = groups[i].GID
	} else {
		if _, exists := findGroup(groups, name); exists {
			return c.Errorf(9, "group %s exists - if you want to add this user to that group, use -g.", name)
		}
		gid = uid
		if slices.ContainsFunc(groups, func(g Group) bool { return g.GID == gid }) {
			gid = nextID("", 1000, func(id int) bool { return slices.ContainsFunc(groups, func(g Group) bool { return g.GID == id }) })
		}
		groups = append(groups, Group{Name: name, GID: gid})
	}
	if f.has('G') {
		var status int
		if groups, status = addMember(c, groups, f['G'], name); status != 0 {
			return status
		}
	}
	home := "/home/" + name
	if f.has('d') {
		home = f['d']
	}
	shell := "/bin/sh"
	if f.has('s') {
		shell = f['s']
	}
	if f.has('m') {
		return c.NotModelled("useradd -m")
	}
	users = append(users, User{Name: name, UID: uid, GID: gid, Gecos: f['c'], Home: home, Shell: shell})
	if err := c.Host.writeGroups(groups); err != nil {
		return errStatus(c, err)
	}
	if err := c.Host.writeUsers(users); err != nil {
		return errStatus(c, err)
	}
	return 0
}

func indexOf(users []User, name string) int {
	return slices.IndexFunc(users, func(u User) bool { return u.Name == name })
}

// nextID is the given id, or the lowest free one from min.
func nextID(given string, lowest int, taken func(int) bool) int {
	if given != "" {
		n, _ := strconv.Atoi(given)
		return n
	}
	for id := lowest; ; id++ {
		if !taken(id) {
			return id
		}
	}
}

// addMember makes name a member of each group in list (comma separated), and, unless appending,
// of no other group.
func addMember(c *Call, groups []Group, list, name string) ([]Group, int) {
	want := map[int]bool{}
	for _, g := range strings.Split(list, ",") {
		if g == "" {
			continue
		}
		i, ok := findGroup(groups, g)
		if !ok {
			return nil, c.Errorf(6, "group '%s' does not exist", g)
		}
		want[i] = true
	}
	for i := range groups {
		has := slices.Contains(groups[i].Members, name)
		switch {
		case want[i] && !has:
			groups[i].Members = append(groups[i].Members, name)
		case !want[i] && has:
			groups[i].Members = slices.DeleteFunc(slices.Clone(groups[i].Members), func(m string) bool { return m == name })
		}
	}
	return groups, 0
}

func usermod(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "ao", "ugGsdlc", nil)
	if !ok {
		return 127
	}
	if len(operands) != 1 {
		return c.Errorf(2, "invalid usage")
	}
	if f.has('a') || f.has('l') {
		return c.NotModelled("usermod -a or -l")
	}
	users, groups := c.Host.Users(), c.Host.Groups()
	i := indexOf(users, operands[0])
	if i < 0 {
		return c.Errorf(6, "user '%s' does not exist", operands[0])
	}
	u := &users[i]
	if f.has('u') {
		uid, _ := strconv.Atoi(f['u'])
		if uid != u.UID && !f.has('o') && slices.ContainsFunc(users, func(o User) bool { return o.UID == uid }) {
			return c.Errorf(4, "UID '%d' already exists", uid)
		}
		c.Host.reownHome(u.Home, u.UID, uid)
		u.UID = uid
	}
	if f.has('g') {
		j, ok := findGroup(groups, f['g'])
		if !ok {
			return c.Errorf(6, "group '%s' does not exist", f['g'])
		}
		u.GID = groups[j].GID
	}
	if f.has('G') {
		var status int
		if groups, status = addMember(c, groups, f['G'], u.Name); status != 0 {
			return status
		}
	}
	if f.has('s') {
		u.Shell = f['s']
	}
	if f.has('d') {
		u.Home = f['d']
	}
	if f.has('c') {
		u.Gecos = f['c']
	}
	if err := c.Host.writeGroups(groups); err != nil {
		return errStatus(c, err)
	}
	if err := c.Host.writeUsers(users); err != nil {
		return errStatus(c, err)
	}
	return 0
}

// reownHome gives the files under home that carry the old uid the new one, as usermod -u does.
func (h *Host) reownHome(home string, from, to int) {
	for _, p := range h.FS.Paths(home) {
		if fi, err := h.FS.Stat(p, false); err == nil {
			if uid, _ := ownerOf(fi); uid == from {
				_ = h.FS.Chown(p, to, -1)
			}
		}
	}
}

// userdel removes the account and, with USERGROUPS_ENAB, the group named like the user when it
// is the user's primary group and has no other member.
func userdel(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok || len(f) > 0 || len(operands) != 1 {
		return c.NotModelled("this form of userdel")
	}
	name := operands[0]
	users, groups := c.Host.Users(), c.Host.Groups()
	i := indexOf(users, name)
	if i < 0 {
		return c.Errorf(6, "user '%s' does not exist", name)
	}
	u := users[i]
	users = slices.Delete(users, i, i+1)
	for j := range groups {
		groups[j].Members = slices.DeleteFunc(slices.Clone(groups[j].Members), func(m string) bool { return m == name })
	}
	if j, ok := findGroup(groups, name); ok && groups[j].Name == name && groups[j].GID == u.GID && len(groups[j].Members) == 0 &&
		!slices.ContainsFunc(users, func(o User) bool { return o.GID == u.GID }) {
		groups = slices.Delete(groups, j, j+1)
	}
	if err := c.Host.writeGroups(groups); err != nil {
		return errStatus(c, err)
	}
	if err := c.Host.writeUsers(users); err != nil {
		return errStatus(c, err)
	}
	return 0
}

func groupadd(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "rfo", "g", nil)
	if !ok {
		return 127
	}
	if len(operands) != 1 {
		return c.Errorf(2, "invalid usage")
	}
	name := operands[0]
	groups := c.Host.Groups()
	if slices.ContainsFunc(groups, func(g Group) bool { return g.Name == name }) {
		if f.has('f') {
			return 0
		}
		return c.Errorf(9, "group '%s' already exists", name)
	}
	taken := func(id int) bool { return slices.ContainsFunc(groups, func(g Group) bool { return g.GID == id }) }
	lowest := 1000
	if f.has('r') {
		lowest = 100
	}
	gid := nextID(f['g'], lowest, taken)
	if f.has('g') && !f.has('o') && taken(gid) {
		return c.Errorf(4, "GID '%d' already exists", gid)
	}
	groups = append(groups, Group{Name: name, GID: gid})
	if err := c.Host.writeGroups(groups); err != nil {
		return errStatus(c, err)
	}
	return 0
}

// groupmod -g changes a group's GID and the primary GID of its users, as shadow-utils does.
func groupmod(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "o", "g", nil)
	if !ok {
		return 127
	}
	if len(operands) != 1 || !f.has('g') {
		return c.NotModelled("groupmod without -g")
	}
	groups, users := c.Host.Groups(), c.Host.Users()
	i := slices.IndexFunc(groups, func(g Group) bool { return g.Name == operands[0] })
	if i < 0 {
		return c.Errorf(6, "group '%s' does not exist", operands[0])
	}
	gid, _ := strconv.Atoi(f['g'])
	if gid != groups[i].GID && !f.has('o') && slices.ContainsFunc(groups, func(g Group) bool { return g.GID == gid }) {
		return c.Errorf(4, "GID '%d' already exists", gid)
	}
	old := groups[i].GID
	groups[i].GID = gid
	for j := range users {
		if users[j].GID == old {
			users[j].GID = gid
		}
	}
	if err := c.Host.writeGroups(groups); err != nil {
		return errStatus(c, err)
	}
	if err := c.Host.writeUsers(users); err != nil {
		return errStatus(c, err)
	}
	return 0
}

func groupdel(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok || len(f) > 0 || len(operands) != 1 {
		return c.NotModelled("this form of groupdel")
	}
	groups, users := c.Host.Groups(), c.Host.Users()
	i := slices.IndexFunc(groups, func(g Group) bool { return g.Name == operands[0] })
	if i < 0 {
		return c.Errorf(6, "group '%s' does not exist", operands[0])
	}
	for _, u := range users {
		if u.GID == groups[i].GID {
			return c.Errorf(8, "cannot remove the primary group of user '%s'", u.Name)
		}
	}
	if err := c.Host.writeGroups(slices.Delete(groups, i, i+1)); err != nil {
		return errStatus(c, err)
	}
	return 0
}

// addSystemAccount adds a system user and its group with the same id, as a package's
// maintainer script does, unless the user exists.
func (h *Host) addSystemAccount(name string, id int, home string) {
	if _, ok := h.User(name); ok {
		return
	}
	if _, ok := h.Group(name); !ok {
		must(h.writeGroups(append(h.Groups(), Group{Name: name, GID: id})))
	}
	g, _ := h.Group(name)
	must(h.writeUsers(append(h.Users(), User{Name: name, UID: id, GID: g.GID, Home: home, Shell: "/usr/sbin/nologin"})))
}
