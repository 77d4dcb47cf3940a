package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The programs the provider sends to hosts are files embedded with go:embed; make lint checks
// them (tools/lint-scripts.sh). An embedded file that check does not list would reach hosts
// unchecked: a new kind of program needs a check of its own there first.
func TestScriptFilesAreLinted(t *testing.T) {
	out, err := exec.Command("sh", "tools/lint-scripts.sh", "--list").Output()
	if err != nil {
		t.Fatalf("tools/lint-scripts.sh --list: %v", err)
	}
	linted := strings.Fields(string(out))
	if len(linted) == 0 {
		t.Fatal("tools/lint-scripts.sh --list lists no file")
	}
	for _, f := range linted {
		// lint-scripts splits its file list at blanks.
		if strings.ContainsAny(f, " \t\n*?[") {
			t.Errorf("%q: a script's path must hold no blank or glob character", f)
		}
	}
	embedded := embeddedFiles(t, "internal")
	if len(embedded) == 0 {
		t.Fatal("no go:embed directive found under internal/")
	}
	for _, f := range embedded {
		if !slices.Contains(linted, f) {
			t.Errorf("%s is embedded but tools/lint-scripts.sh does not check it", f)
		}
	}
}

// embeddedFiles lists the files named by go:embed directives in the non-test Go files under
// root, except the lab's (its image's stand-ins are no programs the provider sends).
func embeddedFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join(root, "lab") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, pattern := range embedPatterns(t, path) {
			matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), pattern))
			if err != nil || len(matches) == 0 {
				t.Errorf("%s: go:embed %s matches no file (%v)", path, pattern, err)
			}
			files = append(files, matches...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func embedPatterns(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "//go:embed "); ok {
			patterns = append(patterns, strings.Fields(rest)...)
		}
	}
	return patterns
}
