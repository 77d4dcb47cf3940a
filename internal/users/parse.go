package users

import (
	"fmt"
	"strconv"
	"strings"
)

// PasswdEntry is one line of /etc/passwd or of `getent passwd`.
type PasswdEntry struct {
	Name  string
	UID   int64
	GID   int64
	Gecos string
	Home  string
	Shell string
}

// GroupEntry is one line of /etc/group or of `getent group`.
type GroupEntry struct {
	Name    string
	GID     int64
	Members []string
}

// ParsePasswdLine parses "name:x:uid:gid:gecos:home:shell".
func ParsePasswdLine(line string) (PasswdEntry, error) {
	f := strings.Split(strings.TrimRight(line, "\r\n"), ":")
	if len(f) != 7 {
		return PasswdEntry{}, fmt.Errorf("passwd line %q: want 7 colon-separated fields, got %d", line, len(f))
	}
	uid, err := parseID(f[2])
	if err != nil {
		return PasswdEntry{}, fmt.Errorf("passwd line %q: uid: %w", line, err)
	}
	gid, err := parseID(f[3])
	if err != nil {
		return PasswdEntry{}, fmt.Errorf("passwd line %q: gid: %w", line, err)
	}
	return PasswdEntry{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]}, nil
}

// ParseGroupLine parses "name:x:gid:member1,member2".
func ParseGroupLine(line string) (GroupEntry, error) {
	f := strings.Split(strings.TrimRight(line, "\r\n"), ":")
	if len(f) != 4 {
		return GroupEntry{}, fmt.Errorf("group line %q: want 4 colon-separated fields, got %d", line, len(f))
	}
	gid, err := parseID(f[2])
	if err != nil {
		return GroupEntry{}, fmt.Errorf("group line %q: gid: %w", line, err)
	}
	return GroupEntry{Name: f[0], GID: gid, Members: splitList(f[3], ",")}, nil
}

// ParsePasswd parses the content of /etc/passwd or `getent passwd`, skipping
// blank lines, comments and NIS "+"/"-" compat entries, which name no local
// account.
func ParsePasswd(content []byte) ([]PasswdEntry, error) {
	return parseDataLines(content, ParsePasswdLine)
}

// ParseGroup parses the content of /etc/group or `getent group`.
func ParseGroup(content []byte) ([]GroupEntry, error) {
	return parseDataLines(content, ParseGroupLine)
}

// parseDataLines parses each of dataLines with parse; the first line it refuses is the error.
func parseDataLines[E any](content []byte, parse func(string) (E, error)) ([]E, error) {
	var out []E
	for _, line := range dataLines(content) {
		e, err := parse(line)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func dataLines(content []byte) []string {
	var out []string
	for _, line := range strings.Split(string(content), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		out = append(out, line)
	}
	return out
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 || id > 4294967295 {
		return 0, fmt.Errorf("%q is not a numeric id", s)
	}
	return id, nil
}

// splitList splits a separated list, dropping empty items so that "" means
// no items at all.
func splitList(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
