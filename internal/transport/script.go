package transport

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// ScriptEnv starts every script run on a host, the one prelude: an unset variable is an error
// rather than an empty word, the C locale keeps command output in the form the parsers know, and
// the sbin directories are not on every login user's PATH. Whether a failed command ends the
// script (set -e) is each script's own choice, written in its body.
//
//go:embed env.sh
var ScriptEnv string

// Script builds a shell script in which every value from configuration or from a host is one
// quoted word: a command's arguments (Command) or a named variable (Set) that the fixed shell
// text (Text) refers to as "$name". Nothing else is concatenated into the script.
type Script struct {
	b strings.Builder
}

// NewScript starts a script with ScriptEnv.
func NewScript() *Script {
	s := &Script{}
	s.b.WriteString(ScriptEnv)
	return s
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Set assigns value to the shell variable name, for the text that follows to use as "$name".
// Names are written in the program, never taken from input: a bad one is a programming error.
func (s *Script) Set(name, value string) *Script {
	if !shellName.MatchString(name) {
		panic(fmt.Sprintf("transport: %q is not a shell variable name", name))
	}
	s.b.WriteString(name + "=" + Quote(value) + "\n")
	return s
}

// Args sets the positional parameters to values, for text that takes a list as "$@".
func (s *Script) Args(values ...string) *Script {
	return s.Command(append([]string{"set", "--"}, values...)...)
}

// Command adds one line that runs argv exactly as given.
func (s *Script) Command(argv ...string) *Script {
	s.b.WriteString(Command(argv...) + "\n")
	return s
}

// Text adds shell text written in the program. A value reaches it only through a variable set
// before it, or as a word made by Quote or Command. A missing final newline is added.
func (s *Script) Text(text string) *Script {
	s.b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		s.b.WriteByte('\n')
	}
	return s
}

// String returns the script.
func (s *Script) String() string { return s.b.String() }
