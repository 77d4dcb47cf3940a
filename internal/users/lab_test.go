package users

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// The account tools of a real trixie host: create, drift by hand, repair,
// home directory, removal that keeps the home.
func TestLabAccountLifecycle(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 2*time.Minute)
	const node, user, group, extra = "gpu01", "gpctest_alice", "gpctest_grp", "gpctest_extra"
	ex := transporttest.LabHost{Lab: l, Host: node}
	t.Cleanup(func() {
		script := "userdel " + user + " 2>/dev/null; groupdel " + group + " 2>/dev/null; groupdel " + extra +
			" 2>/dev/null; rm -rf /home/" + user + "; true"
		if _, _, err := l.Exec(context.Background(), node, script); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	spec := UserSpec{Name: user, UID: 59001, PrimaryGroup: group, Groups: []string{extra}, Shell: "/bin/bash"}

	for name, gid := range map[string]int64{group: 59001, extra: 59002} {
		if changed, err := EnsureGroup(ctx, ex, name, gid); err != nil || !changed {
			t.Fatalf("EnsureGroup(%s) = %v, %v", name, changed, err)
		}
	}
	if changed, err := EnsureGroup(ctx, ex, group, 59001); err != nil || changed {
		t.Fatalf("EnsureGroup again = %v, %v, want no change", changed, err)
	}
	if changed, err := EnsureUser(ctx, ex, spec); err != nil || !changed {
		t.Fatalf("EnsureUser() = %v, %v", changed, err)
	}
	assertInSync(ctx, t, ex, node, spec)
	if out, _, _ := l.Exec(ctx, node, "test -e /home/"+user+" && echo exists"); out != "" {
		t.Fatal("useradd created a home directory; it must not (create_home: false)")
	}

	if _, _, err := l.Exec(ctx, node, "usermod -u 59005 "+user); err != nil {
		t.Fatal(err)
	}
	st, err := ReadAccounts(ctx, ex, []string{user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(node, spec, st.Users[user]); !slices.Equal(d, []string{"uid 59005 on gpu01, want 59001"}) {
		t.Fatalf("drift = %q", d)
	}
	if changed, err := EnsureUser(ctx, ex, spec); err != nil || !changed {
		t.Fatalf("repair = %v, %v", changed, err)
	}
	assertInSync(ctx, t, ex, node, spec)

	if created, err := CreateHome(ctx, ex, spec); err != nil || !created {
		t.Fatalf("CreateHome() = %v, %v", created, err)
	}
	out, _, err := l.Exec(ctx, node, "stat -c '%u:%g %a' /home/"+user+"; test -e /home/"+user+"/.bashrc && echo skel")
	if err != nil || out != "59001:59001 700\nskel\n" {
		t.Fatalf("home: %q, %v", out, err)
	}

	if removed, err := RemoveUser(ctx, ex, user); err != nil || !removed {
		t.Fatalf("RemoveUser() = %v, %v", removed, err)
	}
	if removed, err := RemoveUser(ctx, ex, user); err != nil || removed {
		t.Fatalf("RemoveUser() again = %v, %v, want false, nil", removed, err)
	}
	if _, _, err := l.Exec(ctx, node, "test -d /home/"+user); err != nil {
		t.Fatal("removing the account deleted its home directory")
	}
	for _, g := range []string{extra, group} {
		if removed, err := RemoveGroup(ctx, ex, g); err != nil || !removed {
			t.Fatalf("RemoveGroup(%s) = %v, %v", g, removed, err)
		}
	}
}

func TestLabHostErrorsAreQuoted(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	spec := UserSpec{Name: "gpctest_orphan", UID: 59010, PrimaryGroup: "gpctest_nosuchgroup"}
	_, err := EnsureUser(ctx, transporttest.LabHost{Lab: l, Host: "gpu01"}, spec)
	if err == nil || !strings.Contains(err.Error(), "gpctest_nosuchgroup") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("err = %v, want useradd's complaint about the group", err)
	}
}

func assertInSync(ctx context.Context, t *testing.T, ex transport.Executor, node string, spec UserSpec) {
	t.Helper()
	st, err := ReadAccounts(ctx, ex, []string{spec.Name}, []string{spec.PrimaryGroup})
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(node, spec, st.Users[spec.Name]); len(d) != 0 {
		t.Fatalf("after apply: %q (state %+v)", d, st.Users[spec.Name])
	}
}

// The shared listing and the per-name lookups (getent passwd NAME, id -nG NAME, getent group
// NAME, the test of a shell's path) agree on every account and shell of a real host, admin in
// sudo included.
func TestLabListingAgreesWithLookupsByName(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	for _, host := range []string{lab.LoginHost, "gpu01"} {
		ex := transporttest.LabHost{Lab: l, Host: host}
		res, err := ex.Sudo(ctx, listingScript, nil)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := parseListing(res.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		userNames := slices.Sorted(maps.Keys(listed.users))
		groupNames := slices.Sorted(maps.Keys(listed.groups))
		if !slices.Contains(userNames, l.AdminUser) || len(groupNames) < 10 {
			t.Fatalf("%s: the listing has %d users (admin among them: %v) and %d groups", host, len(userNames), slices.Contains(userNames, l.AdminUser), len(groupNames))
		}
		shells := slices.Sorted(maps.Keys(listed.shells))
		if !listed.shells["/bin/bash"].Executable || !listed.shells["/bin/bash"].Listed || !slices.Contains(shells, "/usr/sbin/nologin") {
			t.Fatalf("%s: the listing's shells %+v lack /bin/bash (listed, executable) or nologin", host, listed.shells)
		}
		q := Lookup{Users: userNames, Groups: groupNames, Shells: shells}
		res, err = ex.Sudo(ctx, readScript(q), nil)
		if err != nil {
			t.Fatal(err)
		}
		byName, err := parseAccounts(res.Stdout, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range userNames {
			if got, _ := listed.user(n); !reflect.DeepEqual(got, byName.Users[n]) {
				t.Errorf("%s: user %s from the listing %+v, by name %+v", host, n, got, byName.Users[n])
			}
		}
		for _, n := range groupNames {
			g := listed.groups[n]
			if got := (GroupState{Exists: true, GID: g.GID, Members: g.Members}); !reflect.DeepEqual(got, byName.Groups[n]) {
				t.Errorf("%s: group %s from the listing %+v, by name %+v", host, n, got, byName.Groups[n])
			}
		}
		for _, s := range shells {
			if listed.shells[s].Executable != byName.Shells[s].Executable {
				t.Errorf("%s: shell %s executable from the listing %v, by path %v", host, s, listed.shells[s].Executable, byName.Shells[s].Executable)
			}
		}
	}
}
