package users

import (
	"fmt"
	"regexp"
)

// NamePattern is the portable subset of what shadow-utils accepts: it
// excludes upper case, a leading dash (read as an option) and every shell
// metacharacter, so a valid name can never change a command's meaning.
var NamePattern = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

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

// ValidateName checks a user or group name against NamePattern.
func ValidateName(kind Kind, name string) error {
	if NamePattern.MatchString(name) {
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

// ValidateHome requires an absolute path of safe characters and refuses "/",
// which no user should own.
func ValidateHome(home string) error {
	if pathPattern.MatchString(home) && !hasDotSegment(home) {
		return nil
	}
	return fmt.Errorf("invalid home directory %q: it must be an absolute path of letters, digits, "+
		"'.', '_', '+' and '-', without '.' or '..' components", home)
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
