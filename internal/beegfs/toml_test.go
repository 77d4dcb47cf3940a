package beegfs

import (
	"strings"
	"testing"
)

func TestSetTOMLString(t *testing.T) {
	fixture := string(readFixture(t, "beegfs-mgmtd.toml"))
	tests := []struct {
		name, content, key, value, want string
	}{
		{
			name:    "shipped file: added right after its commented default",
			content: fixture, key: "db-file", value: "/beegfs/mgmtd/mgmtd.sqlite",
			want: strings.Replace(fixture, "# db-file = \"/var/lib/beegfs/mgmtd.sqlite\"\n", "# db-file = \"/var/lib/beegfs/mgmtd.sqlite\"\ndb-file = \"/beegfs/mgmtd/mgmtd.sqlite\"\n", 1),
		},
		{
			name:    "no commented default: added after the last top-level setting",
			content: "# x\nlog-level = \"warn\"\n\n[t]\na = 1\n", key: "db-file", value: "/x",
			want: "# x\nlog-level = \"warn\"\ndb-file = \"/x\"\n\n[t]\na = 1\n",
		},
		{
			// Uncommenting the table later must not take the key into it.
			name:    "only comments and a commented table: added above the commented table",
			content: "# BeeGFS\n\n# [cap-pool-meta-limits]\n# inodes-low = \"10M\"\n", key: "db-file", value: "/x",
			want: "# BeeGFS\ndb-file = \"/x\"\n\n# [cap-pool-meta-limits]\n# inodes-low = \"10M\"\n",
		},
		{
			name:    "a commented key inside a commented table is not the default",
			content: "# [t]\n# db-file = \"/y\"\n", key: "db-file", value: "/x",
			want: "db-file = \"/x\"\n# [t]\n# db-file = \"/y\"\n",
		},
		{
			name:    "only comments before a table: added above the table's blank lines",
			content: "# db-file = \"/var/lib/beegfs/mgmtd.sqlite\"\n\n[t]\na = \"b\"\n", key: "db-file", value: "/x",
			want: "# db-file = \"/var/lib/beegfs/mgmtd.sqlite\"\ndb-file = \"/x\"\n\n[t]\na = \"b\"\n",
		},
		{
			name:    "active line rewritten in place, alignment kept",
			content: "# x\ndb-file   = \"/var/lib/beegfs/mgmtd.sqlite\" # default\nlog-level = \"warn\"\n",
			key:     "db-file", value: "/beegfs/mgmtd/mgmtd.sqlite",
			want: "# x\ndb-file   = \"/beegfs/mgmtd/mgmtd.sqlite\"\nlog-level = \"warn\"\n",
		},
		{
			name:    "no table: appended at the end",
			content: "log-level = \"warn\"\n", key: "db-file", value: "/beegfs/mgmtd/mgmtd.sqlite",
			want: "log-level = \"warn\"\ndb-file = \"/beegfs/mgmtd/mgmtd.sqlite\"\n",
		},
		{
			name:    "empty file",
			content: "", key: "db-file", value: "/x",
			want: "db-file = \"/x\"\n",
		},
		{
			name:    "same key inside a table is not the top-level key",
			content: "[other]\ndb-file = \"/y\"\n", key: "db-file", value: "/x",
			want: "db-file = \"/x\"\n[other]\ndb-file = \"/y\"\n",
		},
		{
			name:    "quote and backslash escaped",
			content: "", key: "db-file", value: `/a"b\c`,
			want: "db-file = \"/a\\\"b\\\\c\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetTOMLString([]byte(tt.content), tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			v, ok, err := GetTOMLString(got, tt.key)
			if err != nil || !ok || v != tt.value {
				t.Errorf("read back %q, %v, %v; want %q", v, ok, err, tt.value)
			}
		})
	}
}

func TestSetTOMLStringRefuses(t *testing.T) {
	tests := []struct{ name, key, value string }{
		{"control character", "db-file", "/a\nb = 1"},
		{"dotted key", "a.b", "/x"},
		{"empty key", "", "/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := SetTOMLString(nil, tt.key, tt.value); err == nil {
				t.Error("SetTOMLString succeeded")
			}
		})
	}
}

func TestGetTOMLString(t *testing.T) {
	tests := []struct {
		name, content, want string
		ok, wantErr         bool
	}{
		{"commented out", string(readFixture(t, "beegfs-mgmtd.toml")), "", false, false},
		{"basic string", `db-file = "/beegfs/mgmtd/mgmtd.sqlite"`, "/beegfs/mgmtd/mgmtd.sqlite", true, false},
		{"literal string with comment", `db-file = '/x\y' # note`, `/x\y`, true, false},
		{"not a string", `db-file = 5`, "", false, true},
		{"unterminated", `db-file = "/x`, "", false, true},
		{"garbage after", `db-file = "/x" y`, "", false, true},
		{"unsupported escape", `db-file = "/x\n"`, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := GetTOMLString([]byte(tt.content), "db-file")
			if (err != nil) != tt.wantErr || got != tt.want || ok != tt.ok {
				t.Errorf("got %q, %v, %v; want %q, %v, error %v", got, ok, err, tt.want, tt.ok, tt.wantErr)
			}
		})
	}
}
