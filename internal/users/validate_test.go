package users

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr bool
	}{
		{"alice", false},
		{"_svc", false},
		{"gpu-users", false},
		{"a" + strings.Repeat("b", 31), false},
		{"a" + strings.Repeat("b", 32), true},
		{"alice;rm -rf /", true},
		{"-x", true},
		{"ALICE", true},
		{"1alice", true},
		{"", true},
		{"al ice", true},
		{"alice$", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateName(KindUser, tt.name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ValidateName(%q) = %v, wantErr %v", tt.name, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "invalid user name") {
				t.Errorf("error %q does not name the problem", err)
			}
		})
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id          int64
		allowSystem bool
		wantErr     string
	}{
		{1001, false, ""},
		{MaxID, false, ""},
		{0, true, "reserved for root"},
		{-1, true, "negative"},
		{999, false, "system range"},
		{999, true, ""},
		{1, true, ""},
		{MaxID + 1, true, "above the supported maximum"},
		{4294967295, true, "above the supported maximum"},
	}
	for _, tt := range tests {
		err := ValidateID(KindUser, tt.id, tt.allowSystem)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("ValidateID(%d, %v) = %v, want nil", tt.id, tt.allowSystem, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "uid") {
			t.Errorf("ValidateID(%d, %v) = %v, want error containing %q", tt.id, tt.allowSystem, err, tt.wantErr)
		}
	}
	if err := ValidateID(KindGroup, 0, true); err == nil || !strings.HasPrefix(err.Error(), "gid 0") {
		t.Errorf("group id 0: got %v, want an error about gid 0", err)
	}
}

func TestValidatePaths(t *testing.T) {
	tests := []struct {
		path    string
		shellOK bool
		homeOK  bool
	}{
		{"/bin/bash", true, false},
		{"/usr/sbin/nologin", true, false},
		{"/home/alice", true, true},
		{"/data/home/c++", true, true},
		{"bash", false, false},
		{"/", false, false},
		{"", false, false},
		{"/home/../etc", true, false},
		{"/home/./alice", true, false},
		{"/home/al ice", false, false},
		{"/bin/sh;reboot", false, false},
		{"/home/$USER", false, false},
		{"/home//alice", false, false},
		{"/srv/alice", true, true},
		{"/var/lib/svc", true, true},
		{"/alice", true, false},
		{"/etc", true, false},
		{"/etc/alice", true, false},
		{"/var", true, false},
		{"/var/lib", true, false},
		{"/var/tmp/alice", true, false},
		{"/var/spool/alice", true, false},
		{"/root", true, false},
		{"/root/alice", true, false},
		{"/lib64/alice", true, false},
		{"/tmp/alice", true, false},
		{"/proc/1", true, false},
		{"/etcetera/alice", true, true},
	}
	for _, tt := range tests {
		if got := ValidateShell(tt.path) == nil; got != tt.shellOK {
			t.Errorf("ValidateShell(%q) ok = %v, want %v", tt.path, got, tt.shellOK)
		}
		if got := ValidateHome(tt.path) == nil; got != tt.homeOK {
			t.Errorf("ValidateHome(%q) ok = %v, want %v", tt.path, got, tt.homeOK)
		}
	}
}

func TestUserSpecValidate(t *testing.T) {
	good := UserSpec{Name: "alice", UID: 1001, PrimaryGroup: "users", Groups: []string{"gpu"}, Shell: "/bin/bash"}
	tests := []struct {
		name    string
		mutate  func(*UserSpec)
		system  bool
		wantErr string
	}{
		{"valid", func(*UserSpec) {}, false, ""},
		{"bad name", func(s *UserSpec) { s.Name = "ALICE" }, false, "invalid user name"},
		{"uid zero", func(s *UserSpec) { s.UID = 0 }, true, "reserved for root"},
		{"system uid refused", func(s *UserSpec) { s.UID = 500 }, false, "system range"},
		{"system uid allowed", func(s *UserSpec) { s.UID = 500 }, true, ""},
		{"no primary group", func(s *UserSpec) { s.PrimaryGroup = "" }, false, "primary group is required"},
		{"bad group", func(s *UserSpec) { s.Groups = []string{"x y"} }, false, "invalid group name"},
		{"bad shell", func(s *UserSpec) { s.Shell = "bash" }, false, "invalid shell"},
		{"bad home", func(s *UserSpec) { s.Home = "/home/a b" }, false, "invalid home"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.mutate(&s)
			err := s.Validate(tt.system)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateHomeSaysWhy(t *testing.T) {
	for home, want := range map[string]string{
		"/etc":         "top-level directory",
		"/usr/local/a": "inside /usr, which belongs to the operating system",
		"/var/log/a":   "inside /var",
	} {
		if err := ValidateHome(home); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateHome(%q) = %v, want it to say %q", home, err, want)
		}
	}
}

func TestAdminGroupsIn(t *testing.T) {
	got := AdminGroupsIn("users", "wheel", "sudo", "video", "sudo", "adm", "admin", "root")
	want := []string{"adm", "admin", "root", "sudo", "wheel"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("AdminGroupsIn = %v, want %v", got, want)
	}
	if got := AdminGroupsIn("users", "gpu", "sudoers"); got != nil {
		t.Errorf("AdminGroupsIn(users, gpu, sudoers) = %v, want none", got)
	}
}
