package slurm

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPitfallRef(t *testing.T) {
	want := "pitfall P9, " + PitfallsURL + "#p9"
	if got := PitfallRef("P9"); got != want {
		t.Errorf("PitfallRef(P9) = %q, want %q", got, want)
	}
}

var citation = regexp.MustCompile(`PitfallRef\("(P[0-9]+)"\)`)

// Every pitfall a message cites has its entry on the page the link leads to.
func TestEveryCitedPitfallHasAnEntry(t *testing.T) {
	page, err := os.ReadFile("../../docs/guides/pitfalls.md")
	if err != nil {
		t.Fatal(err)
	}
	cited := 0
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range citation.FindAllStringSubmatch(string(src), -1) {
			cited++
			if !strings.Contains(string(page), `<a id="`+strings.ToLower(m[1])+`"></a>`) {
				t.Errorf("%s cites %s, which has no entry in docs/guides/pitfalls.md", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("found no PitfallRef citation: the walk looked in the wrong place")
	}
}
