package beegfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestParsePasswdAndHomeUnder(t *testing.T) {
	a, err := parsePasswdLine("admin", "admin:x:1000:1000:Admin,,,:/home/admin:/bin/bash\n")
	if err != nil {
		t.Fatal(err)
	}
	if a != (Account{Name: "admin", UID: 1000, Home: "/home/admin"}) {
		t.Fatalf("parsed %+v", a)
	}
	if _, err := parsePasswdLine("admin", ""); err == nil {
		t.Error("empty getent output accepted")
	}
	cases := []struct{ home, mount, want string }{
		{"/home/admin", "/home", "admin"},
		{"/home", "/home", "."},
		{"/homer/admin", "/home", ""},
		{"/root", "/home", ""},
		{"/srv/home/a/b", "/srv/home", "a/b"},
	}
	for _, c := range cases {
		if got := HomeUnder(Account{Home: c.home}, c.mount); got != c.want {
			t.Errorf("HomeUnder(%s, %s) = %q, want %q", c.home, c.mount, got, c.want)
		}
	}
}

func goodCopy() HomeCopy {
	return HomeCopy{
		{Exists: true, UID: 1000, Mode: 0o750, Dir: true},
		{Exists: true, UID: 1000, Mode: 0o700, Dir: true},
		{Exists: true, UID: 1000, Mode: 0o600},
	}
}

func TestHomeCopyUsable(t *testing.T) {
	admin := Account{Name: "admin", UID: 1000, Home: "/home/admin"}
	cases := map[string]struct {
		edit func(*HomeCopy)
		want string
	}{
		"usable":              {func(*HomeCopy) {}, ""},
		"root-owned home":     {func(c *HomeCopy) { c[0].UID = 0 }, ""},
		"no home":             {func(c *HomeCopy) { *c = HomeCopy{} }, "/home/admin does not exist"},
		"no keys":             {func(c *HomeCopy) { c[2] = PathInfo{} }, "/home/admin/.ssh/authorized_keys does not exist"},
		"keys is a directory": {func(c *HomeCopy) { c[2].Dir = true }, "not a regular file"},
		".ssh is a file":      {func(c *HomeCopy) { c[1].Dir = false }, "/home/admin/.ssh is not a directory"},
		// A UID mismatch is what --numeric-ids prevents and sshd refuses.
		"other owner":     {func(c *HomeCopy) { c[2].UID = 1001 }, "owned by UID 1001, not by admin (UID 1000)"},
		"group writable":  {func(c *HomeCopy) { c[1].Mode = 0o770 }, "mode 0770"},
		"world writable ": {func(c *HomeCopy) { c[0].Mode = 0o757 }, "mode 0757"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := goodCopy()
			tc.edit(&c)
			err := c.Usable(admin)
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// stagingReply is the staging script's output for a BeeGFS copy and a local copy.
func stagingReply(onBeeGFS, local HomeCopy) string {
	var out strings.Builder
	for i := range sshPaths {
		for _, side := range []struct {
			key string
			p   PathInfo
		}{{"b", onBeeGFS[i]}, {"l", local[i]}} {
			out.WriteString("@@gpucluster " + side.key + strconv.Itoa(i) + "\n")
			if !side.p.Exists {
				out.WriteString("\n@@rc 1\n")
				continue
			}
			kind := "regular file"
			if side.p.Dir {
				kind = "directory"
			}
			fmt.Fprintf(&out, "%d %o %s\n\n@@rc 0\n", side.p.UID, side.p.Mode, kind)
		}
	}
	return transporttest.Sections(out.String())
}

const adminPasswd = "admin:x:1000:1000::/home/admin:/bin/bash\n"

func TestGuardFirstMount(t *testing.T) {
	set := ClientSettings{MountPath: "/home", Mgmtd: "10.0.0.10", FSType: "beegfs"}
	fresh := ClientState{ClientConf: clientConf(t)}
	cases := map[string]struct {
		migrate bool
		replies []transporttest.Reply
		refused string // "" means allowed
		copied  bool   // the refusal comes after the migration wrote into BeeGFS
		scripts int
	}{
		"home already on BeeGFS": {
			replies: []transporttest.Reply{{Stdout: adminPasswd}, {Stdout: stagingReply(goodCopy(), goodCopy())}},
			scripts: 2,
		},
		// P9: fresh BeeGFS, no migration: refused after looking only.
		"fresh BeeGFS": {
			replies: []transporttest.Reply{{Stdout: adminPasswd}, {Stdout: stagingReply(HomeCopy{}, goodCopy())}},
			refused: "on BeeGFS, /home/admin does not exist",
			scripts: 2,
		},
		"migrate": {
			migrate: true,
			replies: []transporttest.Reply{{Stdout: adminPasswd}, {Stdout: stagingReply(HomeCopy{}, goodCopy())}, {Stdout: stagingReply(goodCopy(), goodCopy())}},
			scripts: 3,
		},
		"migrate but no local keys either": {
			migrate: true,
			replies: []transporttest.Reply{{Stdout: adminPasswd}, {Stdout: stagingReply(HomeCopy{}, HomeCopy{goodCopy()[0]})}},
			refused: "nothing to migrate",
			scripts: 2,
		},
		"migration left no usable copy": {
			migrate: true,
			replies: []transporttest.Reply{{Stdout: adminPasswd}, {Stdout: stagingReply(HomeCopy{}, goodCopy())}, {Stdout: stagingReply(HomeCopy{goodCopy()[0]}, goodCopy())}},
			refused: "after copying the local content",
			copied:  true,
			scripts: 3,
		},
		"home outside the mount": {
			replies: []transporttest.Reply{{Stdout: "admin:x:1000:1000::/srv/admin:/bin/bash\n"}},
			scripts: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: tc.replies}
			err := GuardFirstMount(context.Background(), f, fresh, set, "admin", tc.migrate)
			var refusal *HomeRefusal
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && !errors.As(err, &refusal):
				t.Fatalf("got %v, want a HomeRefusal", err)
			case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
				t.Fatalf("got %q, want %q", err, tc.refused)
			case tc.refused != "" && refusal.Copied != tc.copied:
				t.Fatalf("refusal says copied = %v, want %v", refusal.Copied, tc.copied)
			}
			if len(f.Calls) != tc.scripts {
				t.Fatalf("%d scripts ran, want %d", len(f.Calls), tc.scripts)
			}
			for i, c := range f.Calls[1:] {
				migrating := strings.Contains(c.Script, "migrate=1")
				if migrating != (tc.migrate && i == 1) {
					t.Errorf("script %d: migrate=%v", i+1, migrating)
				}
				// The shipped config names no mgmtd: the staging mount uses an
				// edited copy on stdin, the node's file stays as it is.
				if !strings.Contains(c.Script, "ownconf=1") || !strings.Contains(string(c.Stdin), "10.0.0.10") {
					t.Errorf("script %d does not mount with a staging config naming mgmtd", i+1)
				}
			}
		})
	}
}

func TestStagingScriptRefusesOddHomes(t *testing.T) {
	for _, rel := range []string{"", "/home/admin", "../etc", "a/../../etc"} {
		if _, err := stagingScript(Staging{MountPath: "/home", Rel: rel}); err == nil {
			t.Errorf("rel %q accepted", rel)
		}
	}
}

func TestStagingScriptCleansUpOnEarlyFailure(t *testing.T) {
	failures := map[string][2]string{
		"config copy": {`cat > "$stage/client.conf"`, `cat > "$stage/none/client.conf"`},
		"mkdir":       {`mkdir "$stage/beegfs" "$stage/local"`, `mkdir "$stage/none/beegfs"`},
	}
	for name, f := range failures {
		t.Run(name, func(t *testing.T) {
			run := t.TempDir()
			sandbox := transporttest.Shell{Rewrite: func(s string) string {
				if !strings.Contains(s, f[0]) {
					t.Fatalf("the script has no %s", f[0])
				}
				s = strings.Replace(s, f[0], f[1], 1)
				return strings.Replace(s, "/run/gpucluster-beegfs-staging", run+"/staging", 1)
			}}
			_, err := InspectHome(context.Background(), sandbox, Staging{MountPath: "/home", Rel: "admin", Conf: []byte("sysMgmtdHost = 10.0.0.10\n")})
			if err == nil {
				t.Fatal("the failing step went unnoticed")
			}
			if left, _ := os.ReadDir(run); len(left) != 0 {
				t.Errorf("staging left %v behind after %v", left, err)
			}
		})
	}
}

// TestStagingScriptOnThisMachine runs the staging script for real, as root, in
// a private mount namespace, with the BeeGFS mount replaced by a bind mount of
// a directory standing in for BeeGFS: the migration copies numeric owners
// and never overwrites, and nothing stays mounted or behind.
func TestStagingScriptOnThisMachine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	for _, tool := range []string{"unshare", "rsync"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	dir := t.TempDir()
	local, fake, run := filepath.Join(dir, "home"), filepath.Join(dir, "beegfs"), filepath.Join(dir, "run")
	for _, d := range []string{local + "/admin/.ssh", local + "/bob", fake + "/bob", run} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(local+"/admin/.ssh/authorized_keys", []byte("ssh-ed25519 AAAA admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local+"/bob/notes", []byte("local, older\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake+"/bob/notes", []byte("on BeeGFS, newer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{local + "/admin", local + "/admin/.ssh", local + "/admin/.ssh/authorized_keys"} {
		if err := os.Chown(p, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(local+"/admin", 0o750); err != nil {
		t.Fatal(err)
	}
	sandbox := transporttest.Shell{Rewrite: func(s string) string {
		s = strings.Replace(s, `mount -t beegfs beegfs_nodev "$stage/beegfs" -o "cfgFile=$cfg"`, `mount --bind `+fake+` "$stage/beegfs"`, 1)
		return strings.Replace(s, "/run/gpucluster-beegfs-staging", run+"/staging", 1)
	}}
	admin := Account{Name: "admin", UID: 1000, Home: local + "/admin"}
	look := Staging{MountPath: local, Rel: "admin", Conf: []byte("sysMgmtdHost = 10.0.0.10\n")}
	before, err := InspectHome(context.Background(), sandbox, look)
	if err != nil {
		t.Fatal(err)
	}
	if before.OnBeeGFS.Usable(admin) == nil || before.Local.Usable(admin) != nil {
		t.Fatalf("before: BeeGFS %+v, local %+v", before.OnBeeGFS, before.Local)
	}
	look.Migrate = true
	after, err := InspectHome(context.Background(), sandbox, look)
	if err != nil {
		t.Fatal(err)
	}
	if err := after.OnBeeGFS.Usable(admin); err != nil {
		t.Fatalf("after migration: %v", err)
	}
	fi, err := os.Stat(fake + "/admin/.ssh/authorized_keys")
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 1000 || fi.Mode().Perm() != 0o600 {
		t.Errorf("migrated authorized_keys: %+v, mode %o; want UID 1000, 0600", fi.Sys(), fi.Mode().Perm())
	}
	if got, _ := os.ReadFile(fake + "/bob/notes"); string(got) != "on BeeGFS, newer\n" {
		t.Errorf("the migration overwrote a file on BeeGFS: %q", got)
	}
	if left, _ := os.ReadDir(run); len(left) != 0 {
		t.Errorf("staging left %v behind", left)
	}
	if out, _ := exec.Command("findmnt", "-n", "-o", "TARGET").Output(); strings.Contains(string(out), run) {
		t.Errorf("a staging mount is still mounted:\n%s", out)
	}
}
