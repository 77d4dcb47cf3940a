package transport

import (
	"os/exec"
	"strings"
	"testing"
)

var shellValues = []string{
	"",
	"plain",
	"/etc/slurm/slurm.conf",
	"with space",
	"it's",
	"''",
	`"double"`,
	"$HOME",
	"`id`",
	"$(id)",
	"a;rm -rf /",
	"alice;rm -rf /",
	"-x",
	"*",
	"~root",
	"A=b",
	"back\\slash",
	"new\nline",
	"tab\there",
	"ünïcode",
	"!event",
	"#comment",
}

func TestQuote(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "''"},
		{"plain", "plain"},
		{"/etc/hosts", "/etc/hosts"},
		{"user@host:22", "user@host:22"},
		{"with space", "'with space'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"A=b", "'A=b'"},
		{"~root", "'~root'"},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// The shell itself is the judge: every value must come back byte for byte.
func TestQuoteRoundTripThroughShell(t *testing.T) {
	for _, v := range shellValues {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+Quote(v)).Output()
		if err != nil {
			t.Fatalf("sh with %q: %v", v, err)
		}
		if string(out) != v {
			t.Errorf("round trip of %q gave %q", v, out)
		}
	}
}

func TestCommandRoundTripThroughShell(t *testing.T) {
	argv := append([]string{"/bin/sh", "-c", `for a; do printf '%s\0' "$a"; done`, "sh"}, shellValues...)
	out, err := exec.Command("/bin/sh", "-c", Command(argv...)).Output()
	if err != nil {
		t.Fatalf("run Command: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(shellValues) {
		t.Fatalf("got %d arguments, want %d: %q", len(got), len(shellValues), got)
	}
	for i, v := range shellValues {
		if got[i] != v {
			t.Errorf("argument %d: got %q, want %q", i, got[i], v)
		}
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"useradd", "-u", "1001", "alice"}, "useradd -u 1001 alice"},
		{[]string{"echo", "a b", "it's"}, `echo 'a b' 'it'\''s'`},
		{[]string{"printf", "%s", ""}, "printf %s ''"},
	}
	for _, tt := range tests {
		if got := Command(tt.argv...); got != tt.want {
			t.Errorf("Command(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

// FuzzQuote is the shell's own verdict on any value: quoted as an argument and set as a named
// variable of a Script, it must come back byte for byte. A NUL byte cannot be part of an
// argument on Unix at all, so no script can carry it.
func FuzzQuote(f *testing.F) {
	for _, v := range shellValues {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsRune(v, 0) {
			t.Skip("NUL")
		}
		for _, script := range []string{
			"printf %s " + Quote(v),
			NewScript().Set("v", v).Text(`printf %s "$v"`).String(),
		} {
			out, err := exec.Command("/bin/sh", "-c", script).Output()
			if err != nil {
				t.Fatalf("sh -c %q: %v", script, err)
			}
			if string(out) != v {
				t.Fatalf("round trip of %q through %q gave %q", v, script, out)
			}
		}
	})
}
