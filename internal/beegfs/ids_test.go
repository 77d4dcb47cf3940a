package beegfs

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseIDFilesFromTargetDirectory(t *testing.T) {
	dir := "target-201"
	target, err := ParseNumID(TargetNumIDFile, readFixture(t, filepath.Join(dir, TargetNumIDFile)))
	if err != nil || target != 201 {
		t.Errorf("targetNumID = %d, %v; want 201", target, err)
	}
	node, err := ParseNumID(NodeNumIDFile, readFixture(t, filepath.Join(dir, NodeNumIDFile)))
	if err != nil || node != 2 {
		t.Errorf("nodeNumID = %d, %v; want 2", node, err)
	}
	alias, err := ParseOriginalNodeID(readFixture(t, filepath.Join(dir, OriginalNodeIDV7File)))
	if err != nil || alias != "gpu02" {
		t.Errorf("originalNodeID.v7 = %q, %v; want gpu02", alias, err)
	}
}

func TestParseNumID(t *testing.T) {
	tests := []struct {
		content string
		want    uint16
		wantErr bool
	}{
		{"201\n", 201, false},
		{"201", 201, false},
		{" 7 \n", 7, false},
		{"65535\n", 65535, false},
		{"0\n", 0, true},
		{"65536\n", 0, true},
		{"-1\n", 0, true},
		{"\n", 0, true},
		{"", 0, true},
		{"1\n2\n", 0, true},
		{"target201\n", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseNumID(TargetNumIDFile, []byte(tt.content))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseNumID(%q) = %d, %v; want %d, error %v", tt.content, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseOriginalNodeID(t *testing.T) {
	tests := []struct {
		content, want string
		wantErr       bool
	}{
		{"gpu01\n", "gpu01", false},
		{"gpu01\nignored\n", "gpu01", false},
		{"\n", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := ParseOriginalNodeID([]byte(tt.content))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseOriginalNodeID(%q) = %q, %v", tt.content, got, err)
		}
	}
}

func TestDefaultTargetID(t *testing.T) {
	tests := []struct {
		node, want int64
		wantErr    string
	}{
		{1, 101, ""},
		{2, 201, ""},
		{4, 401, ""}, // the guide's gpu04
		{655, 65501, ""},
		{656, 0, "set target_id explicitly"},
		{0, 0, "outside BeeGFS's range"},
		{65536, 0, "outside BeeGFS's range"},
	}
	for _, tt := range tests {
		got, err := DefaultTargetID(tt.node)
		if got != tt.want || (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("DefaultTargetID(%d) = %d, %v; want %d, %q", tt.node, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCheckIDConflicts(t *testing.T) {
	existing := []TargetIdentity{
		{Host: "gpu01", Directory: "/data/beegfs-storage", NodeNumID: 1, TargetID: 101},
		{Host: "gpu02", Directory: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201},
	}
	tests := []struct {
		name      string
		candidate TargetIdentity
		wantErr   string
	}{
		{"new node 4, target 401", TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 4, TargetID: 401}, ""},
		{"itself", existing[1], ""},
		{"second target on the same node", TargetIdentity{Host: "gpu02", Directory: "/data2/beegfs-storage", NodeNumID: 2, TargetID: 202}, ""},
		{"target ID taken", TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 4, TargetID: 201}, "target_id 201 is already used by gpu02"},
		{"node ID taken by another host", TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 2, TargetID: 401}, "node_num_id 2 is already used by the storage service on gpu02"},
		{"second node ID on one host", TargetIdentity{Host: "gpu02", Directory: "/data2/beegfs-storage", NodeNumID: 5, TargetID: 501}, "gpu02 already runs storage node 2"},
		{"target ID out of range", TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 4, TargetID: 70000}, "target_id 70000 is outside"},
		{"node ID zero", TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 0, TargetID: 401}, "node_num_id 0 is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckIDConflicts(existing, tt.candidate)
			wantErr(t, err, tt.wantErr)
		})
	}
}

// wantErr fails the test unless err is nil where want is empty, or holds want.
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}
