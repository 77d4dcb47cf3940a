package users

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// pathPattern keeps paths to characters that need no quoting at all; home
// directories and shells with spaces or globs are a support burden on every
// tool that reads /etc/passwd.
var pathPattern = regexp.MustCompile(`^(/[A-Za-z0-9._+-]+)+$`)

// ID ranges. Debian's adduser.conf and login.defs reserve 0-999 for system
// accounts; 60000 is the top of the range adduser hands out to people
// (LAST_UID) and keeps clear of 65534 (nobody) and the 65535/4294967295
// "invalid" sentinels.
const (
	MinRegularID = 1000
	MaxID        = 60000
)

// Kind tells users from groups in validation messages and the ledger.
type Kind string

const (
	KindUser  Kind = "user"
	KindGroup Kind = "group"
)

// ValidateName checks a user or group name against transport.AccountNamePattern.
func ValidateName(kind Kind, name string) error {
	if transport.AccountNamePattern.MatchString(name) {
		return nil
	}
	return fmt.Errorf("invalid %s name %q: it must start with a lower-case letter or underscore, "+
		"contain only lower-case letters, digits, '_' and '-', and be at most 32 characters", kind, name)
}

// ValidateID checks a uid or gid. 0 is root's and is never managed; IDs below
// 1000 belong to the distribution's system accounts and need an explicit
// opt-in.
func ValidateID(kind Kind, id int64, allowSystem bool) error {
	label := idLabel(kind)
	switch {
	case id == 0:
		return fmt.Errorf("%s 0 is reserved for root and cannot be managed", label)
	case id < 0:
		return fmt.Errorf("%s %d is negative", label, id)
	case id > MaxID:
		return fmt.Errorf("%s %d is above the supported maximum %d", label, id, MaxID)
	case id < MinRegularID && !allowSystem:
		return fmt.Errorf("%s %d is in the system range (below %d); allow system IDs explicitly to use it",
			label, id, MinRegularID)
	}
	return nil
}

// ValidateShell requires an absolute path of safe characters, for example
// /bin/bash or /usr/sbin/nologin.
func ValidateShell(shell string) error {
	if pathPattern.MatchString(shell) {
		return nil
	}
	return fmt.Errorf("invalid shell %q: it must be an absolute path of letters, digits, '.', '_', '+' and '-'", shell)
}

// ValidateHome requires an absolute path of safe characters, at least two levels deep, outside
// the operating system's directories. useradd and usermod accept any path, and CreateHome hands
// the directory to the user: an account with home /etc would own nothing there at first, but
// every tool that writes dotfiles into a home (shells, ssh, editors) would then write into /etc.
func ValidateHome(home string) error {
	if !pathPattern.MatchString(home) || hasDotSegment(home) {
		return fmt.Errorf("invalid home directory %q: it must be an absolute path of letters, digits, "+
			"'.', '_', '+' and '-', without '.' or '..' components", home)
	}
	if strings.Count(home, "/") < 2 {
		return fmt.Errorf("home directory %q is a top-level directory: use a directory inside one, such as /home/NAME", home)
	}
	if dir, ok := systemDirOf(home); ok {
		return fmt.Errorf("home directory %q is inside %s, which belongs to the operating system: "+
			"use a directory under /home (the shared home), or for a service account under /var/lib", home, dir)
	}
	return nil
}

// SystemDirs are the directories no home may be in or be: the operating system's programs,
// libraries, configuration, kernel interfaces, runtime state, temporary files and root's home.
// /var is one of them except below /var/lib, where Debian puts service accounts' homes.
var SystemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
	"/proc", "/root", "/run", "/sbin", "/sys", "/tmp", "/usr", "/var"}

func systemDirOf(home string) (string, bool) {
	if strings.HasPrefix(home, "/var/lib/") {
		return "", false
	}
	for _, d := range SystemDirs {
		if home == d || strings.HasPrefix(home, d+"/") {
			return d, true
		}
	}
	return "", false
}

var dotSegment = regexp.MustCompile(`/\.\.?(/|$)`)

func hasDotSegment(p string) bool {
	return dotSegment.MatchString(p)
}

func idLabel(kind Kind) string {
	if kind == KindGroup {
		return "gid"
	}
	return "uid"
}

// AdminGroups are the groups that grant root or read the system's logs: sudoers' %sudo
// (Debian, Ubuntu) and %admin (still in Ubuntu's sudoers), wheel (RHEL, SUSE, Arch), adm (the
// logs) and root. Adding an account to one makes it an administrator; taking an administrator
// out of one can lock the administrators, and this provider, out of the node.
var AdminGroups = []string{"adm", "admin", "root", "sudo", "wheel"}

// AdminGroupsIn lists, sorted and once each, the admin groups among names.
func AdminGroupsIn(names ...string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(AdminGroups, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
