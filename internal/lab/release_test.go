package lab

import (
	"strings"
	"testing"
)

func TestNewRelease(t *testing.T) {
	for in, want := range map[string]string{"": "trixie", "trixie": "trixie", "forky": "forky"} {
		if got, err := NewRelease(in); err != nil || got != want {
			t.Errorf("NewRelease(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"sid", "Forky", "bookworm", "../trixie"} {
		if _, err := NewRelease(in); err == nil || !strings.Contains(err.Error(), EnvRelease) {
			t.Errorf("NewRelease(%q): %v, want an error naming %s", in, err, EnvRelease)
		}
	}
}

// Each release has an image of its own, named after it, so both can be
// cached and run side by side.
func TestCurrentImagePerRelease(t *testing.T) {
	trixie, forky := CurrentImage("trixie"), CurrentImage("forky")
	if !strings.HasPrefix(trixie.Name, "trixie-") || !strings.HasPrefix(forky.Name, "forky-") || trixie.Dir == forky.Dir {
		t.Errorf("images %+v and %+v", trixie, forky)
	}
	if trixie.Release != "trixie" || forky.Release != "forky" {
		t.Errorf("releases %q and %q", trixie.Release, forky.Release)
	}
}

func TestReleaseOfOlderDescriptor(t *testing.T) {
	if got := (&Lab{}).ReleaseName(); got != DefaultRelease {
		t.Errorf("a descriptor without a release: %q", got)
	}
	if got := (&Lab{Release: "forky"}).ReleaseName(); got != "forky" {
		t.Errorf("ReleaseName() = %q", got)
	}
}
