package beegfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseFixture(t *testing.T, name string) *Conf {
	t.Helper()
	c, err := ParseConf(readFixture(t, name))
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return c
}

func TestParseConfRoundTrip(t *testing.T) {
	for _, name := range []string{"beegfs-storage.conf", "storage-after-setup.conf", "storage-two-targets.conf", "beegfs-meta.conf", "beegfs-client.conf"} {
		t.Run(name, func(t *testing.T) {
			want := readFixture(t, name)
			if got := parseFixture(t, name).Bytes(); string(got) != string(want) {
				t.Errorf("round trip changed the file:\n%s", got)
			}
		})
	}
	for _, text := range []string{"", "\n", "a = b", "# only a comment", "a = b\n\n\n"} {
		c, err := ParseConf([]byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := string(c.Bytes()); got != text {
			t.Errorf("round trip of %q gave %q", text, got)
		}
	}
}

func TestConfGet(t *testing.T) {
	c := parseFixture(t, "storage-after-setup.conf")
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"sysMgmtdHost", "10.0.0.10", true},
		{"storeStorageDirectory", ",/data/beegfs-storage", true},
		{"storeAllowFirstRunInit", "false", true},
		{"connStoragePort", "8003", true},
		{"connInterfacesFile", "", false},
		{"Basic", "", false}, // text inside a comment is not a key
	}
	for _, tt := range tests {
		got, ok := c.Get(tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestConfSetEditsInPlace(t *testing.T) {
	tests := []struct {
		name, key, value string
		wantLine         string
		appended         bool
	}{
		{"existing key keeps alignment", "sysMgmtdHost", "10.0.0.10", "sysMgmtdHost                 = 10.0.0.10", false},
		{"replace a value", "storeAllowFirstRunInit", "false", "storeAllowFirstRunInit       = false", false},
		{"empty value", "connStoragePort", "", "connStoragePort              =", false},
		{"new key at the end", "connInterfacesFile", "/etc/beegfs/interfaces", "connInterfacesFile = /etc/beegfs/interfaces", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := strings.Split(strings.TrimSuffix(string(readFixture(t, "beegfs-storage.conf")), "\n"), "\n")
			c := parseFixture(t, "beegfs-storage.conf")
			if err := c.Set(tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			out := string(c.Bytes())
			if !strings.HasSuffix(out, "\n") {
				t.Error("trailing newline lost")
			}
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			wantLen := len(orig)
			if tt.appended {
				wantLen++
			}
			if len(got) != wantLen {
				t.Fatalf("got %d lines, want %d:\n%s", len(got), wantLen, out)
			}
			changed := 0
			for i, line := range got {
				if i < len(orig) && line == orig[i] {
					continue
				}
				changed++
				if line != tt.wantLine {
					t.Errorf("line %d = %q, want %q", i+1, line, tt.wantLine)
				}
			}
			if changed != 1 {
				t.Errorf("%d lines changed, want 1:\n%s", changed, out)
			}
			if v, _ := c.Get(tt.key); v != tt.value {
				t.Errorf("Get after Set = %q, want %q", v, tt.value)
			}
		})
	}
}

func TestParseConfRefuses(t *testing.T) {
	tests := []struct{ name, text, wantErr string }{
		{"duplicate key", "storeFsUUID = ,a\nx = y\nstoreFsUUID = ,b\n", "already set on line 1"},
		{"line without =", "sysMgmtdHost 10.0.0.10\n", "neither a comment nor key = value"},
		{"blank key", " = value\n", "no valid key"},
		{"key with blank", "store Dir = x\n", "no valid key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConf([]byte(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfSetRefuses(t *testing.T) {
	tests := []struct{ name, key, value string }{
		{"line break in value", "sysMgmtdHost", "a\nstoreAllowFirstRunInit = true"},
		{"carriage return", "sysMgmtdHost", "a\r"},
		{"surrounding blanks", "sysMgmtdHost", " a"},
		{"empty key", "", "x"},
		{"key with =", "a=b", "x"},
		{"key with comment", "#a", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseFixture(t, "beegfs-client.conf")
			before := string(c.Bytes())
			if err := c.Set(tt.key, tt.value); err == nil {
				t.Fatal("Set succeeded")
			}
			if string(c.Bytes()) != before {
				t.Error("a refused Set changed the file")
			}
		})
	}
}
