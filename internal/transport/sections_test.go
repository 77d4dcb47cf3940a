package transport

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSections(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want map[string]Section
	}{
		{"empty output", "", map[string]Section{}},
		{
			"several sections",
			"@@gpucluster passwd alice\nalice:x:1002:100::/home/alice:/bin/bash\n@@rc 0\n" +
				"@@gpucluster groups alice\nusers video\n@@rc 0\n",
			map[string]Section{
				"passwd alice": {Lines: []string{"alice:x:1002:100::/home/alice:/bin/bash"}},
				"groups alice": {Lines: []string{"users video"}},
			},
		},
		{
			"non-zero status and no output",
			"@@gpucluster passwd ghost\n\n@@rc 2\n",
			map[string]Section{"passwd ghost": {Status: 2}},
		},
		{
			"blank lines dropped",
			"@@gpucluster os-release\n\nID=debian\n\n\nVERSION_ID=\"13\"\n\n@@rc 0\n",
			map[string]Section{"os-release": {Lines: []string{"ID=debian", `VERSION_ID="13"`}}},
		},
		{
			"text between sections ignored",
			"motd noise\n@@gpucluster kernel\n6.12.0\n@@rc 0\nmore noise\n",
			map[string]Section{"kernel": {Lines: []string{"6.12.0"}}},
		},
		{
			"no trailing newline",
			"@@gpucluster kernel\n6.12.0\n@@rc 0",
			map[string]Section{"kernel": {Lines: []string{"6.12.0"}}},
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
		{"missing status line", "@@gpucluster kernel\n6.12.0\n", "truncated"},
		{"missing status line before next section", "@@gpucluster kernel\n6.12.0\n@@gpucluster hostname\ngpu01\n@@rc 0\n", `"kernel" has no status line`},
		{"status outside section", "@@rc 0\n", "outside a section"},
		{"status after closed section", "@@gpucluster kernel\n@@rc 0\n@@rc 1\n", "outside a section"},
		{"bad status", "@@gpucluster kernel\n@@rc zero\n", "bad status line"},
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

// The shell functions and the parser must agree on the markers.
func TestSectionFuncsRoundTrip(t *testing.T) {
	script := SectionFuncs + `sec ok; echo one; echo two; end $?
sec no-newline; printf 'x'; end 0
sec failed; false; end $?
`
	out, err := exec.Command("sh", "-c", script).Output()
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
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// TestAwkSectionsRoundTrip: awk gives each file the lines cat would, with or without a final
// newline and with blank lines (which the parser drops); a file awk cannot open leaves a
// section that failed, one missing, or output that does not parse, never every section read.
func TestAwkSectionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a": "one\n\ntwo\n", "b": "no final newline", "c": "\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args string) (map[string]Section, error) {
		out, _ := exec.Command("sh", "-c", SectionFuncs+"cd "+Quote(dir)+" && awk "+AwkSections+" "+args+" || end $?").Output()
		return ParseSections(out)
	}
	want := map[string]Section{"a": {Lines: []string{"one", "two"}}, "b": {Lines: []string{"no final newline"}}, "c": {}}
	if got, err := run("k=a a k=b b k=c c"); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, %v, want %#v", got, err, want)
	}
	got, err := run("k=a a k=missing missing k=b b")
	if err == nil && got["a"].Status == 0 && got["b"].Status == 0 && len(got) == 3 && got["missing"].Status == 0 {
		t.Errorf("with a file awk cannot open every section reads as read: %#v", got)
	}
}
