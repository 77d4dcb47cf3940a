package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// labSuite is one of make test's go test runs on a trixie lab: the tests whose names match
// pattern (-run), or those that do not (-skip).
type labSuite struct {
	name, flag string
	pattern    *regexp.Regexp
}

func (s labSuite) runs(test string) bool {
	return s.pattern.MatchString(test) == (s.flag == "-run")
}

// labSuites reads the suites from make lab-suites, so the check sees the patterns make test uses.
func labSuites(t *testing.T) []labSuite {
	t.Helper()
	out, err := exec.Command("make", "-s", "--no-print-directory", "lab-suites").Output()
	if err != nil {
		t.Fatalf("make lab-suites: %v", err)
	}
	var suites []labSuite
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 || (fields[1] != "-run" && fields[1] != "-skip") {
			t.Fatalf("make lab-suites printed %q, want name, -run or -skip, and a pattern", line)
		}
		// go test splits a pattern at slashes into one per level of subtests.
		if strings.Contains(fields[2], "/") {
			t.Fatalf("suite %s's pattern %q has a slash: it would match subtests, not tests", fields[0], fields[2])
		}
		suites = append(suites, labSuite{fields[0], fields[1], regexp.MustCompile(fields[2])})
	}
	return suites
}

// moduleTests lists the Test functions of every package of this module, as go test finds them.
func moduleTests(t *testing.T) []string {
	t.Helper()
	var tests []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || isOtherModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && isTestName(fn.Name.Name) {
				tests = append(tests, path+": "+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tests
}

func isOtherModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// isTestName is go test's rule: Test, then nothing or anything but a lower-case letter.
func isTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	return ok && (rest == "" || rest[0] < 'a' || rest[0] > 'z')
}

// make test runs the module's tests in three go test runs on trixie labs: every test must be
// in exactly one, so none is skipped and none run twice, and every -run suite must have tests.
func TestLabSuitesRunEachTestOnce(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not on PATH")
	}
	suites := labSuites(t)
	tests := moduleTests(t)
	if len(tests) == 0 {
		t.Fatal("no tests found in the module")
	}
	counts := map[string]int{}
	for _, test := range tests {
		name := test[strings.LastIndex(test, " ")+1:]
		var in []string
		for _, s := range suites {
			if s.runs(name) {
				in = append(in, s.name)
				counts[s.name]++
			}
		}
		if len(in) != 1 {
			t.Errorf("%s runs in %d lab suites %v, want exactly one", test, len(in), in)
		}
	}
	for _, s := range suites {
		if counts[s.name] == 0 {
			t.Errorf("lab suite %s (%s %q) runs no test", s.name, s.flag, s.pattern)
		}
	}
	t.Logf("tests per suite: %v", counts)
}
