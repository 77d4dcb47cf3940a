package beegfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestReadHostOnThisMachine answers a query with this machine's own shell
// tools (dpkg-query, findmnt, base64), the same ones the hosts run.
func TestReadHostOnThisMachine(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "beegfs-storage.conf")
	content := "storeStorageDirectory = ,/data/beegfs-storage\n\n# comment\nstoreFsUUID = ,abcd\n"
	secret := filepath.Join(dir, "conn.auth")
	target := filepath.Join(dir, "target")
	empty := filepath.Join(dir, "empty")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(conf, content)
	write(secret, "not\x00text")
	write(filepath.Join(target, "targetNumID"), "201\n")
	write(filepath.Join(target, "nodeNumID"), "2\n")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	q := HostQuery{
		Packages:     []string{"coreutils", "gpucluster-no-such-package"},
		Files:        []string{conf, filepath.Join(dir, "missing.conf")},
		Fingerprints: []string{secret, filepath.Join(dir, "missing.auth")},
		Mounts:       []string{filepath.Join(dir, "not", "yet")},
		Dirs:         []string{target, empty, filepath.Join(dir, "none")},
	}
	st, err := ReadHost(context.Background(), transporttest.Shell{}, q)
	if err != nil {
		t.Fatal(err)
	}
	if st.Packages["coreutils"] == "" || st.Packages["gpucluster-no-such-package"] != "" {
		t.Errorf("packages: %q", st.Packages)
	}
	if f := st.Files[conf]; !f.Exists || string(f.Content) != content {
		t.Errorf("file read back as %q, want %q byte for byte", f.Content, content)
	}
	if st.Files[filepath.Join(dir, "missing.conf")].Exists {
		t.Error("a missing file reads as existing")
	}
	sum := sha256.Sum256([]byte("not\x00text"))
	if got := st.Fingerprints[secret]; got != hex.EncodeToString(sum[:]) {
		t.Errorf("fingerprint %q", got)
	}
	if got, want := st.Permissions[secret], currentUser(t)+" 600"; got != want {
		t.Errorf("permissions %q, want %q", got, want)
	}
	if got := st.Fingerprints[filepath.Join(dir, "missing.auth")]; got != "" {
		t.Errorf("missing file has fingerprint %q", got)
	}
	if m := st.Mounts[filepath.Join(dir, "not", "yet")]; m.Path != dir || m.Target == "" || m.FSType == "" {
		t.Errorf("mount %+v: want the nearest existing ancestor %s looked up", m, dir)
	}
	d := st.Dirs[target]
	if !d.Exists || d.Empty || !d.Initialised() || string(d.TargetNumID) != "201\n" || d.OriginalNodeID != nil {
		t.Errorf("target dir %+v", d)
	}
	if e := st.Dirs[empty]; !e.Exists || !e.Empty || e.Initialised() {
		t.Errorf("empty dir %+v", e)
	}
	if n := st.Dirs[filepath.Join(dir, "none")]; n.Exists {
		t.Errorf("missing dir %+v", n)
	}
}

func TestReadHostRefusesUnsafeNames(t *testing.T) {
	for name, q := range map[string]HostQuery{
		"package": {Packages: []string{"a;b"}},
		"service": {Services: []string{"x y"}},
		"file":    {Files: []string{"relative"}},
		"mount":   {Mounts: []string{"/a b"}},
	} {
		fake := &transporttest.Fake{T: t}
		if _, err := ReadHost(context.Background(), fake, q); err == nil || len(fake.Calls) != 0 {
			t.Errorf("%s: err %v after %d calls; want a refusal before anything runs", name, err, len(fake.Calls))
		}
	}
}

func TestWriteConfOnlyWhenChanged(t *testing.T) {
	read := FileState{Exists: true, Content: []byte("a = 1\n")}
	c, err := ParseConf(read.Content)
	if err != nil {
		t.Fatal(err)
	}
	w := &recordingWriter{}
	if changed, err := WriteConf(context.Background(), w, "/etc/beegfs/x.conf", read, c, 0o644); err != nil || changed || len(w.files) != 0 {
		t.Fatalf("unchanged conf: changed=%v err=%v writes=%d", changed, err, len(w.files))
	}
	if err := c.Set("a", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteConf(context.Background(), w, "/etc/beegfs/x.conf", read, c, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(w.files) != 1 || w.files[0].ExpectSHA256 != read.SHA256() || string(w.files[0].Content) != "a = 2\n" {
		t.Errorf("write %+v: want a conditional write of the edited content", w.files)
	}
}

type recordingWriter struct{ files []transport.File }

func (r *recordingWriter) WriteFile(_ context.Context, f transport.File) (bool, error) {
	r.files = append(r.files, f)
	return true, nil
}

// currentUser is "user:group" of the files this test creates, as stat names them.
func currentUser(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "echo $(id -un):$(id -gn)").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestReadHostDirsAndMountsOnThisMachine: iddir counts every entry ls -A would list (a dotfile,
// a name starting "..", a dangling symlink, a name that is a glob pattern) and nothing else,
// and mountof walks up through parents that do not exist, to / when none does.
func TestReadHostDirsAndMountsOnThisMachine(t *testing.T) {
	dir := t.TempDir()
	entries := map[string]func(string) error{
		"dotfile":  func(d string) error { return os.WriteFile(filepath.Join(d, ".hidden"), nil, 0o600) },
		"dotdot":   func(d string) error { return os.Mkdir(filepath.Join(d, "..x"), 0o755) },
		"dangling": func(d string) error { return os.Symlink(filepath.Join(d, "gone"), filepath.Join(d, "link")) },
		"pattern":  func(d string) error { return os.WriteFile(filepath.Join(d, "*"), nil, 0o600) },
		"empty":    func(string) error { return nil },
	}
	q := HostQuery{Mounts: []string{dir + "/a/b/c", "/gpucluster-no-such-dir/a/b"}}
	for name, create := range entries {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := create(d); err != nil {
			t.Fatal(err)
		}
		q.Dirs = append(q.Dirs, d)
	}
	st, err := ReadHost(context.Background(), transporttest.Shell{}, q)
	if err != nil {
		t.Fatal(err)
	}
	for name := range entries {
		d := st.Dirs[filepath.Join(dir, name)]
		if want := name == "empty"; !d.Exists || d.Empty != want {
			t.Errorf("%s: %+v, want empty %v", name, d, want)
		}
	}
	for p, want := range map[string]string{dir + "/a/b/c": dir, "/gpucluster-no-such-dir/a/b": "/"} {
		if m := st.Mounts[p]; m.Path != want || m.Target == "" {
			t.Errorf("mount of %s: %+v, want %s looked up", p, m, want)
		}
	}
}

// TestReadHostFilesOnThisMachine: files come back byte for byte through Perl's one read (NUL
// bytes, blank lines, no final newline, an empty file), an empty ID file still marks its
// directory initialised, and a file that cannot be read fails the read.
func TestReadHostFilesOnThisMachine(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"binary": "a\x00b\n\n\xffc", "empty": ""}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ids := filepath.Join(dir, "ids")
	if err := os.MkdirAll(filepath.Join(ids, OriginalNodeIDV7File), 0o755); err != nil { // not a regular file: not read
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ids, NodeNumIDFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	q := HostQuery{Files: []string{filepath.Join(dir, "binary"), filepath.Join(dir, "empty")}, Dirs: []string{ids}}
	st, err := ReadHost(context.Background(), transporttest.Shell{}, q)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if f := st.Files[filepath.Join(dir, name)]; !f.Exists || string(f.Content) != content {
			t.Errorf("%s read back as %+v, want %q", name, f, content)
		}
	}
	if d := st.Dirs[ids]; !d.Initialised() || len(d.NodeNumID) != 0 || d.TargetNumID != nil || d.OriginalNodeID != nil {
		t.Errorf("ids %+v, want initialised by an empty %s and nothing else read", d, NodeNumIDFile)
	}
	if _, err := ReadHost(context.Background(), transporttest.Shell{}, HostQuery{Files: []string{ids}}); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("a directory read as a file gave %v, want exit status 1", err)
	}
}

// A directory as the 8.x tools leave it is read with its 8.x files: format.conf marks it set
// up, targetID and registrationToken are read, and 7.x's string ID is read from
// originalNodeID.v7; a directory the setup script prepared without -s awaits its IDs.
func TestReadHost8xFiles(t *testing.T) {
	dir := t.TempDir()
	started, prepared := filepath.Join(dir, "started"), filepath.Join(dir, "prepared")
	for d, files := range map[string]map[string]string{
		started: {
			FormatFile: "# This file was auto-generated. Do not modify it!\nversion=3\n", NodeNumIDFile: "2\n", TargetNumIDFile: "201\n",
			TargetIDFile: "B405-6B1174B7-2\n", RegistrationTokenFile: "1F-2E-1\n", OriginalNodeIDV7File: "gpu02\n\n# String IDs have been deprecated starting with BeeGFS 8.\n",
			"lock.pid": "42\n",
		},
		prepared: {FormatFile: "# This file was auto-generated. Do not modify it!\nversion=3\n"},
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := ReadHost(context.Background(), transporttest.Shell{}, HostQuery{Dirs: []string{started, prepared}})
	if err != nil {
		t.Fatal(err)
	}
	s := st.Dirs[started]
	if !s.SetUp() || !s.Initialised() || s.AwaitsIDs() || string(s.TargetID) != "B405-6B1174B7-2\n" || string(s.RegistrationToken) != "1F-2E-1\n" {
		t.Errorf("started %+v", s)
	}
	if alias, err := ParseOriginalNodeID(s.OriginalNodeID); alias != "gpu02" || err != nil {
		t.Errorf("originalNodeID.v7 = %q, %v", alias, err)
	}
	if p := st.Dirs[prepared]; !p.SetUp() || p.Initialised() || !p.AwaitsIDs() || p.Empty {
		t.Errorf("prepared %+v: want set up, awaiting its IDs", p)
	}
}
