package transport

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExpandHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for in, want := range map[string]string{
		"~/.ssh/id_ed25519": filepath.Join(home, ".ssh/id_ed25519"),
		"/etc/key":          "/etc/key",
		"~other/key":        "~other/key",
		"relative/key":      "relative/key",
	} {
		if got := ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "key"), []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadPrivateKeyFile("~/key"); err != nil || string(b) != "KEY" {
		t.Errorf("ReadPrivateKeyFile(~/key) = %q, %v", b, err)
	}
}
