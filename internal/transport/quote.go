package transport

import (
	"regexp"
	"strings"
)

// safeWord matches values a POSIX shell reads literally, so they can stay
// unquoted and keep logged commands readable. "=" is left out: a first word
// like A=b would be an assignment, not a command.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+:,./-]+$`)

// Quote returns s as one word for a POSIX shell. Single quotes turn off every
// expansion; an embedded single quote ends the quoted part, adds an escaped
// quote and starts a new quoted part.
func Quote(s string) string {
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command builds a shell command line that runs argv exactly as given.
func Command(argv ...string) string {
	words := make([]string, len(argv))
	for i, arg := range argv {
		words[i] = Quote(arg)
	}
	return strings.Join(words, " ")
}
