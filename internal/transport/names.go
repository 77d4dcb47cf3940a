package transport

import (
	"regexp"
	"strings"
)

// The kinds of names that reach a shell or a configuration file, each checked the same way in
// every package. None of them admits a character a POSIX shell reads specially; values are
// quoted all the same.
var (
	// AccountNamePattern is the portable subset of the user and group names shadow-utils
	// accepts: no upper case, no leading dash (read as an option), at most 32 characters.
	AccountNamePattern = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	// PackageNamePattern is Debian policy's package name (section 5.6.1): lower case letters,
	// digits, '+', '-' and '.', at least two characters, starting with a letter or digit.
	PackageNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	// UnitNamePattern is a systemd unit name without its ".service" suffix, template
	// instances ("getty@tty1") included.
	UnitNamePattern = regexp.MustCompile(`^[A-Za-z0-9@._-]+$`)

	hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// IsHostName reports whether s is a DNS host name (RFC 1123): labels of letters, digits and
// inner '-', at most 63 characters each, joined by '.', at most 253 characters in all.
func IsHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !hostLabel.MatchString(label) {
			return false
		}
	}
	return true
}
