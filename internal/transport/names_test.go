package transport

import (
	"strings"
	"testing"
)

func TestIsHostName(t *testing.T) {
	for s, want := range map[string]bool{
		"gpu1":                          true,
		"login.cluster.example":         true,
		"a-b":                           true,
		"":                              false,
		"-a":                            false,
		"a-":                            false,
		"a..b":                          false,
		"a b":                           false,
		"a/b":                           false,
		strings.Repeat("a", 63):         true,
		strings.Repeat("a", 64):         false,
		strings.Repeat("a.", 127) + "a": false,
	} {
		if got := IsHostName(s); got != want {
			t.Errorf("IsHostName(%q) = %v, want %v", s, got, want)
		}
	}
}
