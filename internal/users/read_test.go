package users

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestParseAccountsFixture(t *testing.T) {
	out, err := os.ReadFile("testdata/accounts.out")
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseAccounts([]byte(transporttest.Sections(string(out))), Lookup{Users: []string{"alice", "bob", "carol"}, Groups: []string{"users", "ghosts"}})
	if err != nil {
		t.Fatal(err)
	}
	wantUsers := map[string]UserState{
		"alice": {Exists: true, UID: 1002, GID: 100, PrimaryGroupName: "users",
			Groups: []string{"gpu-users", "video"}, Shell: "/bin/bash", Home: "/home/alice"},
		"bob": {},
		"carol": {Exists: true, UID: 1003, GID: 4242, PrimaryGroupName: "4242",
			Groups: []string{"users"}, Shell: "/bin/sh", Home: "/home/carol"},
	}
	if !reflect.DeepEqual(st.Users, wantUsers) {
		t.Errorf("users = %+v\nwant    %+v", st.Users, wantUsers)
	}
	wantGroups := map[string]GroupState{
		"users":  {Exists: true, GID: 100, Members: []string{"alice", "bob"}},
		"ghosts": {},
	}
	if !reflect.DeepEqual(st.Groups, wantGroups) {
		t.Errorf("groups = %+v, want %+v", st.Groups, wantGroups)
	}
}

func TestParseAccountsErrors(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		wantErr string
	}{
		{"truncated", "@@gpucluster 0 20 passwd alice\nalice:x:1:1::/h:/s\n", "truncated"},
		{"missing section", "", "no getent passwd output for alice"},
		{"getent failure", transporttest.Sections("@@gpucluster passwd alice\n@@rc 3\n"), "status 3"},
		{"garbage line", transporttest.Sections("@@gpucluster passwd alice\nnot-a-passwd-line\n@@rc 0\n"), "want 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseAccounts([]byte(tt.out), Lookup{Users: []string{"alice"}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestReadAccountsAsksForUnlistedNamesQuoted(t *testing.T) {
	fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections("@@gpucluster passwd\n@@rc 0\n@@gpucluster group\n@@rc 0\n")},
		{Stdout: transporttest.Sections("@@gpucluster passwd alice\n@@rc 2\n" +
			"@@gpucluster groups alice\n@@rc 1\n@@gpucluster passwd bob\n@@rc 2\n@@gpucluster groups bob\n@@rc 1\n" +
			"@@gpucluster group users\n@@rc 2\n")}}}
	st, err := ReadAccounts(context.Background(), fx, []string{"alice", "bob"}, []string{"users"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Scripts()) != 2 {
		t.Fatalf("%d round trips, want 2 (the shared listing, then the names it lacks)", len(fx.Scripts()))
	}
	for _, want := range []string{"acct_user alice\n", "acct_user bob\n", "acct_group users\n"} {
		if !strings.Contains(fx.Scripts()[1], want) {
			t.Errorf("script lacks %q:\n%s", want, fx.Scripts()[1])
		}
	}
	if st.Users["alice"].Exists || st.Groups["users"].Exists {
		t.Errorf("missing accounts reported as existing: %+v", st)
	}
}

// A listing that names every account answers in one round trip, with what id -nG would say:
// groups named by GID as getgrgid names them (staff shares users' GID, so id prints users),
// a number where no group has the GID.
func TestReadAccountsFromTheListing(t *testing.T) {
	listing := "@@gpucluster passwd\nalice:x:1002:100::/home/alice:/bin/bash\ncarol:x:1003:4242::/home/carol:/bin/sh\n" +
		"alice:x:9999:100::/elsewhere:/bin/sh\n@@rc 0\n" +
		"@@gpucluster group\nusers:x:100:bob,carol\nvideo:x:44:alice\ngpu-users:x:1500:alice\nstaff:x:100:alice\n@@rc 0\n"
	fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(listing)}}}
	st, err := ReadAccounts(context.Background(), fx, []string{"alice", "carol"}, []string{"users"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fx.Calls); n != 1 || !fx.Calls[0].Read {
		t.Fatalf("%d round trips, want the one shared listing:\n%q", n, fx.Scripts())
	}
	wantUsers := map[string]UserState{
		"alice": {Exists: true, UID: 1002, GID: 100, PrimaryGroupName: "users",
			Groups: []string{"gpu-users", "video"}, Shell: "/bin/bash", Home: "/home/alice"},
		"carol": {Exists: true, UID: 1003, GID: 4242, PrimaryGroupName: "4242",
			Groups: []string{"users"}, Shell: "/bin/sh", Home: "/home/carol"},
	}
	if !reflect.DeepEqual(st.Users, wantUsers) {
		t.Errorf("users = %+v\nwant    %+v", st.Users, wantUsers)
	}
	if want := (GroupState{Exists: true, GID: 100, Members: []string{"bob", "carol"}}); !reflect.DeepEqual(st.Groups["users"], want) {
		t.Errorf("users group = %+v, want %+v", st.Groups["users"], want)
	}
}

func TestReadAccountsRefusesBadNamesWithoutTouchingHost(t *testing.T) {
	fx := &transporttest.Fake{T: t}
	if _, err := ReadAccounts(context.Background(), fx, []string{"alice;rm -rf /"}, nil); err == nil {
		t.Fatal("accepted a name with shell metacharacters")
	}
	if len(fx.Scripts()) != 0 {
		t.Fatal("host was touched")
	}
}

// The real script against this machine's getent and id: root exists,
// a made-up name does not.
func TestReadAccountsLocalShell(t *testing.T) {
	st, err := ReadAccounts(context.Background(), transporttest.Shell{}, []string{"root", "gpc_no_such_user"},
		[]string{"root", "gpc_no_such_group"})
	if err != nil {
		t.Fatal(err)
	}
	root := st.Users["root"]
	if !root.Exists || root.UID != 0 || root.PrimaryGroupName != "root" || root.Home != "/root" {
		t.Errorf("root = %+v", root)
	}
	if st.Users["gpc_no_such_user"].Exists || st.Groups["gpc_no_such_group"].Exists {
		t.Errorf("made-up accounts reported as existing: %+v", st)
	}
	if g := st.Groups["root"]; !g.Exists || g.GID != 0 {
		t.Errorf("group root = %+v", g)
	}
}

// The listing answers for the shells /etc/shells names and the shells accounts have; a shell
// that is neither is asked by path in the round trip that asks for unlisted names, quoted.
func TestReadShellsFromTheListingThenByPath(t *testing.T) {
	listing := "@@gpucluster passwd\nalice:x:1002:100::/home/alice:/bin/bash\n@@rc 0\n" +
		"@@gpucluster group\nusers:x:100:\n@@rc 0\n" +
		"@@gpucluster shells\nxL /bin/bash\n-L /usr/bin/zsh\nx /usr/sbin/nologin\n@@rc 0\n"
	listing = transporttest.Sections(listing)
	fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: listing}}}
	st, err := Read(context.Background(), fx, Lookup{Users: []string{"alice"}, Shells: []string{"/bin/bash", "/usr/bin/zsh", "/usr/sbin/nologin"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fx.Scripts()); n != 1 {
		t.Fatalf("%d round trips, want the one shared listing", n)
	}
	want := map[string]ShellState{"/bin/bash": {Executable: true, Listed: true}, "/usr/bin/zsh": {Listed: true}, "/usr/sbin/nologin": {Executable: true}}
	if !reflect.DeepEqual(st.Shells, want) {
		t.Errorf("shells = %+v, want %+v", st.Shells, want)
	}

	fx = &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: listing},
		{Stdout: transporttest.Sections("@@gpucluster shell /opt/x-1/bin/fish\n@@rc 0\n@@gpucluster shell /bin/nosuchshell\n@@rc 1\n")}}}
	st, err = Read(context.Background(), fx, Lookup{Users: []string{"alice"}, Shells: []string{"/opt/x-1/bin/fish", "/bin/nosuchshell"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fx.Scripts()); n != 2 || !strings.Contains(fx.Scripts()[1], "acct_shell /bin/nosuchshell\n") || strings.Contains(fx.Scripts()[1], "acct_user alice") {
		t.Fatalf("want the listing, then the two shells asked by path and nothing else: %q", fx.Scripts())
	}
	want = map[string]ShellState{"/opt/x-1/bin/fish": {Executable: true}, "/bin/nosuchshell": {}}
	if !reflect.DeepEqual(st.Shells, want) {
		t.Errorf("shells = %+v, want %+v", st.Shells, want)
	}
}

func TestReadRefusesABadShellWithoutTouchingHost(t *testing.T) {
	fx := &transporttest.Fake{T: t}
	if _, err := Read(context.Background(), fx, Lookup{Shells: []string{"/bin/sh;reboot"}}); err == nil {
		t.Fatal("accepted a shell with shell metacharacters")
	}
	if len(fx.Scripts()) != 0 {
		t.Fatal("host was touched")
	}
}

// The real scripts against this machine: /bin/sh is an executable file, a made-up path is not,
// whether the listing or the lookup by path answers.
func TestReadShellsLocalShell(t *testing.T) {
	st, err := Read(context.Background(), transporttest.Shell{}, Lookup{Shells: []string{"/bin/sh", "/bin/gpc_no_such_shell"}})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Shells["/bin/sh"].Executable || st.Shells["/bin/gpc_no_such_shell"].Executable {
		t.Errorf("shells = %+v", st.Shells)
	}
}
