package users

import (
	"os"
	"reflect"
	"testing"
)

func TestParsePasswdFile(t *testing.T) {
	content, err := os.ReadFile("testdata/passwd")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := ParsePasswd(content)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 11 {
		t.Fatalf("got %d entries, want 11 (comment, blank and NIS lines skipped)", len(entries))
	}
	want := PasswdEntry{Name: "admin", UID: 1000, GID: 1000, Gecos: "Cluster admin,,,", Home: "/home/admin", Shell: "/bin/bash"}
	if entries[9] != want {
		t.Errorf("entry 9 = %+v, want %+v", entries[9], want)
	}
	if entries[3].UID != 65534 {
		t.Errorf("nobody uid = %d, want 65534", entries[3].UID)
	}
}

func TestParseGroupFile(t *testing.T) {
	content, err := os.ReadFile("testdata/group")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := ParseGroup(content)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 7 {
		t.Fatalf("got %d entries, want 7", len(entries))
	}
	tests := map[int]GroupEntry{
		1: {Name: "sudo", GID: 27, Members: []string{"admin"}},
		5: {Name: "gpu-users", GID: 2000, Members: []string{"alice", "bob", "carol"}},
		6: {Name: "empty", GID: 2001},
	}
	for i, want := range tests {
		if !reflect.DeepEqual(entries[i], want) {
			t.Errorf("entry %d = %+v, want %+v", i, entries[i], want)
		}
	}
}

func TestParseLinesRejectMalformed(t *testing.T) {
	passwd := []string{
		"alice:x:1001:100::/home/alice",
		"alice:x:abc:100::/home/alice:/bin/sh",
		"alice:x:1001:-5::/home/alice:/bin/sh",
		"",
	}
	for _, line := range passwd {
		if _, err := ParsePasswdLine(line); err == nil {
			t.Errorf("ParsePasswdLine(%q) accepted a malformed line", line)
		}
	}
	group := []string{"users:x:100", "users:x:1e3:", "users:x:100:a:b"}
	for _, line := range group {
		if _, err := ParseGroupLine(line); err == nil {
			t.Errorf("ParseGroupLine(%q) accepted a malformed line", line)
		}
	}
	if _, err := ParsePasswd([]byte("root:x:0:0:root:/root:/bin/bash\nbroken\n")); err == nil {
		t.Error("ParsePasswd accepted a file with a malformed line")
	}
}
