package users

import (
	"reflect"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name     string
		observed func(*UserState)
		want     []string
	}{
		{"in sync", func(*UserState) {}, nil},
		{"missing", func(s *UserState) { *s = UserState{} }, []string{"missing on gpu02"}},
		{"uid", func(s *UserState) { s.UID = 1002 }, []string{"uid 1002 on gpu02, want 1001"}},
		{"several", func(s *UserState) {
			s.PrimaryGroupName, s.Groups, s.Shell, s.Home = "staff", []string{"video"}, "/bin/sh", "/tmp/alice"
		}, []string{
			"primary group staff on gpu02, want users",
			"groups [video] on gpu02, want [gpu-users video]",
			"shell /bin/sh on gpu02, want /bin/bash",
			"home /tmp/alice on gpu02, want /home/alice",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := aliceInSync
			tt.observed(&obs)
			if got := Diff("gpu02", alice, obs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDiffGroup(t *testing.T) {
	tests := []struct {
		observed GroupState
		want     []string
	}{
		{GroupState{Exists: true, GID: 100, Members: []string{"alice"}}, nil},
		{GroupState{}, []string{"missing on gpu01"}},
		{GroupState{Exists: true, GID: 101}, []string{"gid 101 on gpu01, want 100"}},
	}
	for _, tt := range tests {
		if got := DiffGroup("gpu01", "users", 100, tt.observed); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DiffGroup(%+v) = %q, want %q", tt.observed, got, tt.want)
		}
	}
}

func TestAgreedUID(t *testing.T) {
	same := UserState{Exists: true, UID: 1001}
	tests := []struct {
		name    string
		byNode  map[string]UserState
		want    int64
		wantErr string
	}{
		{"agree", map[string]UserState{"login01": same, "gpu01": same}, 1001, ""},
		{"differ", map[string]UserState{"login01": same, "gpu01": same, "gpu02": {Exists: true, UID: 1002}}, 0,
			"different uids across nodes (gpu01 1001, gpu02 1002, login01 1001)"},
		{"missing", map[string]UserState{"login01": same, "gpu02": {}}, 0, "does not exist on gpu02"},
		{"no nodes", nil, 0, "no nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AgreedUID("alice", tt.byNode)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("AgreedUID() = %d, %v, want %d", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("AgreedUID() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// The lab's admin, adopted by a resource that wants it as a plain cluster user: every change
// the apply would make is named, the lost sudo membership first.
func TestAdoptionChanges(t *testing.T) {
	admin := UserState{Exists: true, UID: 1000, GID: 1000, PrimaryGroupName: "admin", Groups: []string{"sudo", "video"},
		Shell: "/bin/bash", Home: "/home/admin"}
	spec := UserSpec{Name: "admin", UID: 1000, PrimaryGroup: "users", Groups: []string{"video", "gpu"}, Shell: "/bin/bash"}
	want := []string{"leaves groups sudo", "joins groups gpu", "primary group admin becomes users"}
	if got := AdoptionChanges(spec, admin); !reflect.DeepEqual(got, want) {
		t.Errorf("AdoptionChanges() = %q, want %q", got, want)
	}
	same := UserSpec{Name: "admin", UID: 1000, PrimaryGroup: "admin", Groups: []string{"sudo", "video"}}
	if got := AdoptionChanges(same, admin); got != nil {
		t.Errorf("AdoptionChanges(matching spec) = %q, want none", got)
	}
	if got := AdoptionChanges(spec, UserState{}); got != nil {
		t.Errorf("AdoptionChanges(no account) = %q, want none", got)
	}
	moved := same
	moved.Shell, moved.Home = "/bin/sh", "/data/admin"
	want = []string{"shell /bin/bash becomes /bin/sh", "home /home/admin becomes /data/admin (the directory is not moved)"}
	if got := AdoptionChanges(moved, admin); !reflect.DeepEqual(got, want) {
		t.Errorf("AdoptionChanges(shell and home) = %q, want %q", got, want)
	}
}
