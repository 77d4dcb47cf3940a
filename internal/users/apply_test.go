package users

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

var alice = UserSpec{Name: "alice", UID: 1001, PrimaryGroup: "users", Groups: []string{"video", "gpu-users"}, Shell: "/bin/bash"}

var aliceInSync = UserState{Exists: true, UID: 1001, GID: 100, PrimaryGroupName: "users",
	Groups: []string{"gpu-users", "video"}, Shell: "/bin/bash", Home: "/home/alice"}

func TestUserCommands(t *testing.T) {
	tests := []struct {
		name     string
		spec     UserSpec
		observed func(*UserState)
		want     []string
	}{
		{"in sync", alice, func(*UserState) {}, nil},
		{"missing", alice, func(s *UserState) { *s = UserState{} },
			[]string{"useradd -M -u 1001 -g users -G gpu-users,video -s /bin/bash -d /home/alice alice"}},
		{"missing, no groups, default shell", UserSpec{Name: "bob", UID: 1002, PrimaryGroup: "users", Home: "/data/home/bob"},
			func(s *UserState) { *s = UserState{} },
			[]string{"useradd -M -u 1002 -g users -d /data/home/bob bob"}},
		{"uid drift", alice, func(s *UserState) { s.UID = 1002 }, []string{"usermod -u 1001 alice"}},
		{"everything differs", alice, func(s *UserState) {
			*s = UserState{Exists: true, UID: 7, PrimaryGroupName: "staff", Shell: "/bin/sh", Home: "/tmp/x"}
		}, []string{"usermod -u 1001 -g users -G gpu-users,video -s /bin/bash -d /home/alice alice"}},
		{"groups removed", UserSpec{Name: "alice", UID: 1001, PrimaryGroup: "users"}, func(*UserState) {},
			[]string{"usermod -G '' alice"}},
		{"primary listed among groups is ignored", UserSpec{Name: "alice", UID: 1001, PrimaryGroup: "users",
			Groups: []string{"users", "video", "gpu-users", "video"}, Shell: "/bin/bash"}, func(*UserState) {}, nil},
		{"shell unmanaged", UserSpec{Name: "alice", UID: 1001, PrimaryGroup: "users", Groups: []string{"video", "gpu-users"}},
			func(s *UserState) { s.Shell = "/bin/zsh" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := aliceInSync
			obs.Groups = append([]string(nil), aliceInSync.Groups...)
			tt.observed(&obs)
			if got := UserCommands(tt.spec, obs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("UserCommands() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGroupCommands(t *testing.T) {
	tests := []struct {
		observed GroupState
		want     []string
	}{
		{GroupState{}, []string{"groupadd -g 100 users"}},
		{GroupState{Exists: true, GID: 100}, nil},
		{GroupState{Exists: true, GID: 1000}, []string{"groupmod -g 100 users"}},
	}
	for _, tt := range tests {
		if got := GroupCommands("users", 100, tt.observed); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("GroupCommands(%+v) = %q, want %q", tt.observed, got, tt.want)
		}
	}
}

// aliceDrifted is the host's account listing with alice under UID 1002.
const aliceDrifted = "@@gpucluster passwd\nroot:x:0:0:root:/root:/bin/bash\nalice:x:1002:100::/home/alice:/bin/bash\n@@rc 0\n" +
	"@@gpucluster group\nroot:x:0:\nusers:x:100:\nvideo:x:44:alice\ngpu-users:x:1500:bob,alice\n@@rc 0\n"

// emptyListing lists no account of the test: it must be asked for by name.
const emptyListing = "@@gpucluster passwd\nroot:x:0:0:root:/root:/bin/bash\n@@rc 0\n@@gpucluster group\nroot:x:0:\n@@rc 0\n"

func TestEnsureUser(t *testing.T) {
	t.Run("repairs drift in a second round trip", func(t *testing.T) {
		fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(aliceDrifted)}, {}}}
		changed, err := EnsureUser(context.Background(), fx, alice)
		if err != nil || !changed {
			t.Fatalf("EnsureUser() = %v, %v", changed, err)
		}
		if len(fx.Scripts()) != 2 || !strings.Contains(fx.Scripts()[1], "\nusermod -u 1001 alice\n") {
			t.Fatalf("scripts = %q", fx.Scripts())
		}
	})
	t.Run("in sync is one round trip", func(t *testing.T) {
		inSync := strings.Replace(aliceDrifted, ":1002:", ":1001:", 1)
		fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(inSync)}}}
		changed, err := EnsureUser(context.Background(), fx, alice)
		if err != nil || changed || len(fx.Scripts()) != 1 {
			t.Fatalf("EnsureUser() = %v, %v after %d scripts", changed, err, len(fx.Scripts()))
		}
	})
	t.Run("host error is quoted", func(t *testing.T) {
		hostErr := &transport.ExitError{Host: "gpu02", Status: 6, Stderr: "useradd: group 'users' does not exist"}
		fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(emptyListing)}, {Stdout: transporttest.Sections("@@gpucluster passwd alice\n@@rc 2\n" +
			"@@gpucluster groups alice\n@@rc 1\n")}, {Err: hostErr}}}
		_, err := EnsureUser(context.Background(), fx, alice)
		if err == nil || !strings.Contains(err.Error(), "group 'users' does not exist") ||
			!strings.Contains(err.Error(), "gpu02") || !strings.Contains(err.Error(), "useradd -M") {
			t.Fatalf("error %v does not quote the host's stderr and the command", err)
		}
	})
	t.Run("invalid spec touches no host", func(t *testing.T) {
		fx := &transporttest.Fake{T: t}
		bad := alice
		bad.Name = "-x"
		if _, err := EnsureUser(context.Background(), fx, bad); err == nil {
			t.Fatal("accepted -x")
		}
	})
}

func TestEnsureGroup(t *testing.T) {
	fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(strings.Replace(emptyListing, "root:x:0:\n", "root:x:0:\nusers:x:1000:\n", 1))}, {}}}
	changed, err := EnsureGroup(context.Background(), fx, "users", 100)
	if err != nil || !changed {
		t.Fatalf("EnsureGroup() = %v, %v", changed, err)
	}
	if !strings.Contains(fx.Scripts()[1], "\ngroupmod -g 100 users\n") {
		t.Errorf("script = %q", fx.Scripts()[1])
	}
	if _, err := EnsureGroup(context.Background(), &transporttest.Fake{T: t}, "users", 0); err == nil {
		t.Error("accepted gid 0")
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name    string
		remove  func(context.Context, transport.Executor, string) (bool, error)
		command string
	}{
		{"user", RemoveUser, `userdel "$name"`},
		{"group", RemoveGroup, `groupdel "$name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: "removed\n"}, {Stdout: ""}}}
			removed, err := tt.remove(context.Background(), fx, "alice")
			if err != nil || !removed {
				t.Fatalf("first remove = %v, %v", removed, err)
			}
			removed, err = tt.remove(context.Background(), fx, "alice")
			if err != nil || removed {
				t.Fatalf("already gone: remove = %v, %v, want false, nil", removed, err)
			}
			if !strings.Contains(fx.Scripts()[0], "\nname=alice\n") || !strings.Contains(fx.Scripts()[0], "\n"+tt.command+"\n") {
				t.Errorf("script lacks %q:\n%s", tt.command, fx.Scripts()[0])
			}
			if strings.Contains(fx.Scripts()[0], " -r") {
				t.Errorf("removal must never delete the home directory:\n%s", fx.Scripts()[0])
			}
		})
	}
}

// The real CreateHome script, confined to a temporary directory standing in
// for shared storage.
func TestCreateHomeLocalShell(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	// Not t.TempDir() nor the package directory: homes under /tmp are refused, and a checkout
	// may itself live under /tmp. /var/lib is where homes of service accounts are allowed.
	base, err := os.MkdirTemp("/var/lib", "gpucluster-test-shared-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	home := filepath.Join(base, "home", "alice")
	spec := UserSpec{Name: "alice", UID: 1001, PrimaryGroup: "root", Home: home}

	created, err := CreateHome(context.Background(), transporttest.Shell{}, spec)
	if err != nil || !created {
		t.Fatalf("CreateHome() = %v, %v", created, err)
	}
	fi, err := os.Stat(home)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no owner information for %s", home)
	}
	if fi.Mode().Perm() != 0o700 || st.Uid != 1001 || st.Gid != 0 {
		t.Errorf("home mode %v owner %d:%d, want 0700 1001:0", fi.Mode().Perm(), st.Uid, st.Gid)
	}
	if skel, _ := os.ReadDir("/etc/skel"); len(skel) > 0 {
		if _, err := os.Lstat(filepath.Join(home, skel[0].Name())); err != nil {
			t.Errorf("/etc/skel not copied: %v", err)
		}
	}

	marker := filepath.Join(home, "keep")
	if err := os.WriteFile(marker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	created, err = CreateHome(context.Background(), transporttest.Shell{}, spec)
	if err != nil || created {
		t.Fatalf("second CreateHome() = %v, %v, want false, nil", created, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("existing home was touched: %v", err)
	}
}
