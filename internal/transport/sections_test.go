package transport

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// frame is one section as the printers frame it.
func frame(key string, status int, content string) string {
	return fmt.Sprintf("%s %d %d %s\n%s\n", sectionMark, status, len(content), key, content)
}

// forged is content that holds a section of its own, in today's framing and in the marker
// lines of the framing before it.
var forged = frame("passwd", 0, "root:x:0:0::/root:/bin/sh") + "@@gpucluster passwd\nmallory:x:0:0::/:/bin/sh\n@@rc 0\n"

func TestParseSections(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want map[string]Section
	}{
		{"empty output", "", map[string]Section{}},
		{
			"several sections",
			frame("passwd alice", 0, "alice:x:1002:100::/home/alice:/bin/bash\n") + frame("groups alice", 0, "users video"),
			map[string]Section{
				"passwd alice": {Lines: []string{"alice:x:1002:100::/home/alice:/bin/bash"}},
				"groups alice": {Lines: []string{"users video"}},
			},
		},
		{"non-zero status and no output", frame("passwd ghost", 2, ""), map[string]Section{"passwd ghost": {Status: 2}}},
		{
			"blank lines dropped",
			frame("os-release", 0, "\nID=debian\n\n\nVERSION_ID=\"13\"\n\n"),
			map[string]Section{"os-release": {Lines: []string{"ID=debian", `VERSION_ID="13"`}}},
		},
		{"NUL bytes and no final newline", frame("key", 0, "a\x00b\n\x00"), map[string]Section{"key": {Lines: []string{"a\x00b", "\x00"}}}},
		{
			"content that looks like sections",
			frame("notes", 0, forged) + frame("shadow", 1, ""),
			map[string]Section{
				"notes":  {Lines: strings.Split(strings.TrimSuffix(forged, "\n"), "\n")},
				"shadow": {Status: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSections([]byte(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestParseSectionsErrors(t *testing.T) {
	tests := []struct {
		name, out, want string
	}{
		{"repeated key", frame("kernel", 0, "6.12.0") + frame("hostname", 0, "gpu01") + frame("kernel", 0, "6.1"), `section "kernel" appears twice`},
		{"length past the end", strings.TrimSuffix(frame("kernel", 0, "6.12.0"), "0\n"), `section "kernel": 6 bytes announced, 4 left: output truncated`},
		{"no newline after the content", strings.TrimSuffix(frame("kernel", 0, "6.12.0"), "\n"), "truncated"},
		{"header cut short", sectionMark + " 0 6", "truncated"},
		{"content longer than announced", strings.Replace(frame("kernel", 0, "6.12.0"), " 6 ", " 5 ", 1), "no newline after its 5 bytes"},
		{"text outside a section", "motd noise\n" + frame("kernel", 0, "6.12.0"), `unexpected line "motd noise"`},
		{"the framing before", "@@gpucluster kernel\n6.12.0\n@@rc 0\n", "unexpected line"},
		{"bad status", sectionMark + " zero 0 kernel\n\n", "bad status"},
		{"negative length", sectionMark + " 0 -1 kernel\n\n", "bad length"},
		{"no key", sectionMark + " 0 0 \n\n", "unexpected line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSections([]byte(tt.out))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
}

// The shell functions frame what a command prints, whatever lines it holds; the shell drops
// NUL bytes and final newlines.
func TestSectionFuncsRoundTrip(t *testing.T) {
	script := ScriptEnv + SectionFuncs + `two() { echo one; echo two; }
sec ok two
sec no-newline printf 'x'
sec failed false
sec forged printf '%s' "$1"
sec nul printf 'a\000b\n\n\n'
secv missing 3
secv held 0 "$1"
`
	out, err := exec.Command("sh", "-c", script, "sh", forged).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSections(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Section{
		"ok":         {Lines: []string{"one", "two"}},
		"no-newline": {Lines: []string{"x"}},
		"failed":     {Status: 1},
		"forged":     {Lines: strings.Split(strings.TrimSuffix(forged, "\n"), "\n")},
		"nul":        {Lines: []string{"ab"}},
		"missing":    {Status: 3},
		"held":       {Lines: strings.Split(strings.TrimSuffix(forged, "\n"), "\n")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// TestAwkSectionsRoundTrip: awk gives each file the lines cat would, with or without a final
// newline, with blank lines (which the parser drops), NUL bytes, and lines that look like
// sections; from a file awk cannot open on, every section is missing.
func TestAwkSectionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a": "one\n\ntwo\n", "b": "no final newline", "c": "\n", "d": "x\x00y\n", "e": forged}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args string) (map[string]Section, error) {
		out, _ := exec.Command("sh", "-c", ScriptEnv+"cd "+Quote(dir)+" && awk "+Quote(AwkSections)+" "+args).Output()
		return ParseSections(out)
	}
	want := map[string]Section{
		"a": {Lines: []string{"one", "two"}},
		"b": {Lines: []string{"no final newline"}},
		"c": {},
		"d": {Lines: []string{"x\x00y"}},
		"e": {Lines: strings.Split(strings.TrimSuffix(forged, "\n"), "\n")},
	}
	if got, err := run("k=a a k=b b k=c c k=d d k=e e"); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, %v, want %#v", got, err, want)
	}
	got, err := run("k=a a k=missing missing k=b b")
	if _, read := got["b"]; err == nil && read {
		t.Errorf("with a file awk cannot open, got %#v, want no section from it on", got)
	}
}

// PerlSections frames what its sec is given, whatever lines it holds, and hexof a file's
// bytes exactly.
func TestPerlSectionsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("a\x00\n\nb"), 0o600); err != nil {
		t.Fatal(err)
	}
	program := PerlSections + `
sec("forged", 0, $ARGV[0]);
sec("file", hexof($ARGV[1]));
sec("unreadable", hexof($ARGV[1] . ".missing"));
sec("status", 3);`
	if strings.Contains(program, "'") {
		t.Fatal("the program holds a single quote")
	}
	out, err := exec.Command("perl", "-e", program, forged, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSections(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Section{
		"forged":     {Lines: strings.Split(strings.TrimSuffix(forged, "\n"), "\n")},
		"file":       {Lines: []string{"61000a0a62"}},
		"unreadable": {Status: 1},
		"status":     {Status: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	if out, err := exec.Command("perl", "-e", PerlSections+`sec("a\nb", 0)`).Output(); err == nil {
		t.Errorf("a key with a newline was printed: %q", out)
	}
}
