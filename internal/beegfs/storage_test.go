package beegfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestRemoveStorageTarget(t *testing.T) {
	tests := map[string]struct {
		fixture, dir    string
		removed         bool
		wantDirs, wantU string
	}{
		"first of two": {"storage-two-targets.conf", "/data/beegfs-storage", true, ",/data2/beegfs-storage", "," + uuidData2},
		"last of two":  {"storage-two-targets.conf", "/data2/beegfs-storage", true, ",/data/beegfs-storage", "," + uuidData},
		"the only one": {"storage-after-setup.conf", "/data/beegfs-storage", true, "", ""},
		"not listed":   {"storage-after-setup.conf", "/data9/beegfs-storage", false, ",/data/beegfs-storage", "," + uuidData},
	}
	for name, tc := range tests {
		before := readFixture(t, tc.fixture)
		c, err := ParseConf(before)
		if err != nil {
			t.Fatal(err)
		}
		removed, err := RemoveStorageTarget(c, tc.dir)
		if err != nil || removed != tc.removed {
			t.Errorf("%s: removed %v, %v; want %v", name, removed, err, tc.removed)
			continue
		}
		dirs, _ := c.Get(KeyStorageDirectory)
		uuids, _ := c.Get(KeyFsUUID)
		if dirs != tc.wantDirs || uuids != tc.wantU {
			t.Errorf("%s: lists %q / %q, want %q / %q", name, dirs, uuids, tc.wantDirs, tc.wantU)
		}
		if first, _ := c.Get(KeyAllowFirstRunInit); first != "false" {
			t.Errorf("%s: %s became %q", name, KeyAllowFirstRunInit, first)
		}
		if !removed && string(c.Bytes()) != string(before) {
			t.Errorf("%s: an unlisted directory changed the file", name)
		}
	}
}

func TestRemoveStorageTargetRefusesMisalignedLists(t *testing.T) {
	c, err := ParseConf([]byte("storeStorageDirectory = ,/data/a,/data/b\nstoreFsUUID = ," + uuidData + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveStorageTarget(c, "/data/a"); err == nil || !strings.Contains(err.Error(), "aligned") {
		t.Errorf("got %v, want a refusal quoting the guide on aligned lists", err)
	}
}

// Destroying one target of a host leaves the others listed, aligned, with
// P12's leading empty element; the service goes only with the last one.
func TestStorageHostRemoveTarget(t *testing.T) {
	const uuidC = "7c1b2a3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	three := "storeStorageDirectory = ,/data/a,/data/b,/data/c\nstoreAllowFirstRunInit = false\nstoreFsUUID = ," +
		uuidData + "," + uuidData2 + "," + uuidC + "\n"
	tests := map[string]struct {
		conf             FileState
		dir              string
		listed           bool
		remaining        int
		wantDirs, wantFs string
	}{
		"middle of three": {FileState{Exists: true, Content: []byte(three)}, "/data/b", true, 2, ",/data/a,/data/c", "," + uuidData + "," + uuidC},
		"first of two":    {fixtureState(t, "storage-two-targets.conf"), "/data/beegfs-storage", true, 1, ",/data2/beegfs-storage", "," + uuidData2},
		"the last one":    {fixtureState(t, "storage-after-setup.conf"), "/data/beegfs-storage", true, 0, "", ""},
		"not listed":      {fixtureState(t, "storage-two-targets.conf"), "/data9/x", false, 2, ",/data/beegfs-storage ,/data2/beegfs-storage", "," + uuidData + " ," + uuidData2},
	}
	for name, tc := range tests {
		r, err := StorageHost{Conf: tc.conf}.RemoveTarget(tc.dir)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r.Listed != tc.listed || r.Remaining != tc.remaining {
			t.Errorf("%s: listed %v, %d remaining; want %v, %d", name, r.Listed, r.Remaining, tc.listed, tc.remaining)
		}
		dirs, _ := r.Conf.Get(KeyStorageDirectory)
		uuids, _ := r.Conf.Get(KeyFsUUID)
		if dirs != tc.wantDirs || uuids != tc.wantFs {
			t.Errorf("%s: lists %q / %q, want %q / %q", name, dirs, uuids, tc.wantDirs, tc.wantFs)
		}
		if first, _ := r.Conf.Get(KeyAllowFirstRunInit); first != "false" {
			t.Errorf("%s: %s became %q", name, KeyAllowFirstRunInit, first)
		}
	}
	if r, err := (StorageHost{}).RemoveTarget("/data/a"); err != nil || r.Listed || r.Remaining != 0 {
		t.Errorf("no config: %+v, %v; want nothing listed", r, err)
	}
	misaligned := FileState{Exists: true, Content: []byte("storeStorageDirectory = ,/data/a,/data/b\nstoreFsUUID = ," + uuidData + "\n")}
	if _, err := (StorageHost{Conf: misaligned}).RemoveTarget("/data/a"); err == nil {
		t.Error("misaligned lists were edited")
	}
}

func fixtureState(t *testing.T, name string) FileState {
	t.Helper()
	return FileState{Exists: true, Content: readFixture(t, name)}
}

func TestTargetRemovalServiceAfter(t *testing.T) {
	running := ServiceState{Active: "active", Enabled: "enabled"}
	stopped := ServiceState{Active: "inactive", Enabled: "enabled"}
	gone := ServiceState{Active: "inactive", Enabled: "not-found"}
	tests := map[string]struct {
		r      TargetRemoval
		svc    ServiceState
		dropIn bool
		want   ServiceAction
	}{
		"others remain":                   {TargetRemoval{Listed: true, Remaining: 1}, running, true, RestartService},
		"others remain, only the drop-in": {TargetRemoval{Remaining: 1}, running, true, RestartService},
		"others remain, nothing of it":    {TargetRemoval{Remaining: 1}, running, false, KeepService},
		"others remain, service stopped":  {TargetRemoval{Listed: true, Remaining: 1}, stopped, true, KeepService},
		"the last one":                    {TargetRemoval{Listed: true}, running, true, DisableService},
		"the last one, already stopped":   {TargetRemoval{Listed: true}, stopped, false, DisableService},
		"no unit":                         {TargetRemoval{}, gone, false, KeepService},
	}
	for name, tc := range tests {
		if got := tc.r.ServiceAfter(tc.svc, tc.dropIn); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

func TestCheckWipe(t *testing.T) {
	want := TargetIdentity{Directory: "/data/beegfs-storage", NodeNumID: 1, TargetID: 101}
	tests := map[string]struct {
		dir     DirState
		refused string // "" when the wipe is allowed
	}{
		"this target":           {initialised("1\n", "101\n"), ""},
		"missing":               {DirState{}, ""},
		"empty":                 {DirState{Exists: true, Empty: true}, ""},
		"another target":        {initialised("1\n", "102\n"), "targetNumID holds 102"},
		"files but no ID files": {DirState{Exists: true}, "holds files but no nodeNumID or targetNumID"},
		"only a targetNumID":    {DirState{Exists: true, TargetNumID: []byte("101\n")}, "not an initialised storage target"},
	}
	for name, tc := range tests {
		err := CheckWipe(want, tc.dir)
		if (err == nil) != (tc.refused == "") || (err != nil && !strings.Contains(err.Error(), tc.refused)) {
			t.Errorf("%s: %v, want %q", name, err, tc.refused)
		}
	}
}

func initialised(node, target string) DirState {
	return DirState{Exists: true, NodeNumID: []byte(node), TargetNumID: []byte(target)}
}

func TestCheckDirIDs(t *testing.T) {
	want := TargetIdentity{Host: "gpu02", Directory: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201}
	tests := map[string]struct {
		dir     DirState
		wantErr []string
	}{
		"same IDs":        {initialised("2\n", "201\n"), nil},
		"other target":    {initialised("2\n", "202\n"), []string{"targetNumID holds 202", "target_id is 201"}},
		"other node":      {initialised("3\n", "201\n"), []string{"nodeNumID holds 3", "node_num_id is 2"}},
		"both":            {initialised("4\n", "401\n"), []string{"holds 4", "holds 401"}},
		"meta directory":  {DirState{Exists: true, NodeNumID: []byte("2\n")}, []string{"not an initialised storage target"}},
		"garbage ID file": {initialised("two\n", "201\n"), []string{"not a number"}},
	}
	for name, tc := range tests {
		err := CheckDirIDs(want, tc.dir)
		if tc.wantErr == nil {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", name, err, w)
			}
		}
	}
}

func TestHostTargetsAndConflicts(t *testing.T) {
	listed := []StorageTarget{
		{Directory: "/data/beegfs-storage", FsUUID: uuidData},
		{Directory: "/data2/beegfs-storage", FsUUID: uuidData2},
		{Directory: "/data3/gone", FsUUID: uuidData2},
	}
	dirs := map[string]DirState{"/data2/beegfs-storage": initialised("4\n", "402\n")}
	if got := OtherDirectories(listed, "/data/beegfs-storage"); strings.Join(got, " ") != "/data2/beegfs-storage /data3/gone" {
		t.Errorf("other directories %v", got)
	}
	others := HostTargets("gpu04", "/data/beegfs-storage", listed, dirs)
	if len(others) != 1 || others[0].TargetID != 402 || others[0].NodeNumID != 4 {
		t.Fatalf("host targets %+v: want only the initialised /data2 target", others)
	}
	tests := map[string]struct {
		cand TargetIdentity
		attr string // "" when accepted
	}{
		"second target on the node": {TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 4, TargetID: 401}, ""},
		"target ID taken":           {TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 4, TargetID: 402}, "target_id"},
		"other node ID on the host": {TargetIdentity{Host: "gpu04", Directory: "/data/beegfs-storage", NodeNumID: 5, TargetID: 501}, "node_num_id"},
	}
	for name, tc := range tests {
		err := CheckIDConflicts(others, tc.cand)
		if (err == nil) != (tc.attr == "") {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err != nil && ConflictAttribute(others, tc.cand) != tc.attr {
			t.Errorf("%s: attribute %q, want %q", name, ConflictAttribute(others, tc.cand), tc.attr)
		}
	}
}

func TestOnRecordedFilesystem(t *testing.T) {
	data := Mount{Path: "/data", Target: "/data", UUID: uuidData}
	root := Mount{Path: "/data", Target: "/", UUID: "1111-2222"}
	tests := map[string]struct {
		now              Mount
		mountpoint, uuid string
		want             bool
	}{
		"new target":                {root, "", "", true},
		"still there":               {data, "/data", uuidData, true},
		"array did not assemble":    {root, "/data", uuidData, false},
		"other filesystem on /data": {Mount{Path: "/data", Target: "/data", UUID: uuidData2}, "/data", uuidData, false},
	}
	for name, tc := range tests {
		if got := OnRecordedFilesystem(tc.now, tc.mountpoint, tc.uuid); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	err := FilesystemMissing("/data/beegfs-storage", "/data", uuidData, root)
	for _, w := range []string{"/data/beegfs-storage", uuidData, "on /", "findmnt /data", "Do not set storeAllowFirstRunInit = true"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

func storageHostInSync(t *testing.T) StorageHost {
	t.Helper()
	dropIn, err := StorageDropIn(201, "/data")
	if err != nil {
		t.Fatal(err)
	}
	return StorageHost{
		Version: "8.4.0-0labstandin1",
		Service: ServiceState{Active: "active", Enabled: "enabled"},
		Conf:    FileState{Exists: true, Content: readFixture(t, "storage-after-setup.conf")},
		DropIn:  FileState{Exists: true, Content: dropIn.Content},
		Mount:   Mount{Path: "/data/beegfs-storage", Target: "/data", UUID: uuidData},
		Dir:     initialised("2\n", "201\n"),
	}
}

func TestStorageDrift(t *testing.T) {
	want := StorageWant{
		Target:     TargetIdentity{Host: "gpu02", Directory: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201},
		Mountpoint: "/data",
		FsUUID:     uuidData,
	}
	if got := StorageDrift(storageHostInSync(t), want); len(got) != 0 {
		t.Fatalf("in sync host reports %q", got)
	}
	conf := func(from, to string) func(*StorageHost) {
		return func(h *StorageHost) {
			h.Conf.Content = []byte(strings.Replace(string(h.Conf.Content), from, to, 1))
		}
	}
	tests := map[string]struct {
		change func(*StorageHost)
		want   string
	}{
		"first run init on":  {conf("storeAllowFirstRunInit       = false", "storeAllowFirstRunInit       = true"), "interlock: " + KeyAllowFirstRunInit},
		"leading comma lost": {conf("= ,/data/beegfs-storage", "= /data/beegfs-storage"), "leading empty element"},
		"uuid changed":       {conf(","+uuidData, ","+uuidData2), "storeFsUUID for /data/beegfs-storage is"},
		"drop-in removed":    {func(h *StorageHost) { h.DropIn = FileState{} }, "drop-in /etc/systemd/system/beegfs-storage.service.d/target-201.conf"},
		"service stopped":    {func(h *StorageHost) { h.Service.Active = "inactive" }, "beegfs-storage is inactive"},
		"service disabled":   {func(h *StorageHost) { h.Service.Enabled = "disabled" }, "disabled, not enabled"},
		"target ID edited":   {func(h *StorageHost) { h.Dir.TargetNumID = []byte("202\n") }, "targetNumID holds 202"},
		"not mounted":        {func(h *StorageHost) { h.Mount = Mount{Path: "/data", Target: "/"}; h.Dir = DirState{} }, "filesystem missing"},
		"package removed":    {func(h *StorageHost) { h.Version = "" }, "beegfs-storage is not installed"},
	}
	for name, tc := range tests {
		h := storageHostInSync(t)
		tc.change(&h)
		got := strings.Join(StorageDrift(h, want), "; ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: drift %q does not say %q", name, got, tc.want)
		}
	}
}

func TestStorageHostConfAndRelease(t *testing.T) {
	h := storageHostInSync(t)
	if got := h.MgmtdHost(); got != "10.0.0.10" {
		t.Errorf("mgmtd host %q", got)
	}
	if r, err := h.Release(); err != nil || r.Major != 8 {
		t.Errorf("release %+v, %v", r, err)
	}
	h.Version = ""
	if _, err := h.Release(); err == nil || !strings.Contains(err.Error(), StoragePackage) {
		t.Errorf("missing package: %v", err)
	}
	h.Conf = FileState{}
	if _, err := h.ParseConf(); err == nil || !strings.Contains(err.Error(), StorageConfPath) {
		t.Errorf("missing conf: %v", err)
	}
}

func TestSetupStorageOutcomes(t *testing.T) {
	setup := StorageSetup{Path: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201, Mgmtd: "10.0.0.10"}
	notEmpty := " * ERROR: Storage target directory is not empty. Initialization of non-empty directories is not allowed: /data/beegfs-storage\n"
	tests := map[string]struct {
		reply transporttest.Reply
		want  Outcome
	}{
		"fresh":     {transporttest.Reply{Stdout: "All done.\n"}, Initialised},
		"not empty": {transporttest.Reply{Stdout: notEmpty, Err: &transport.ExitError{Host: "gpu02", Status: 1}}, AlreadyInitialised},
		"no config": {transporttest.Reply{Err: &transport.ExitError{Host: "gpu02", Status: 1, Stderr: "ERROR: Config file x not found."}}, Failed},
	}
	for name, tc := range tests {
		fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{tc.reply}}
		got, err := SetupStorage(context.Background(), fake, setup)
		if got != tc.want || (got == Failed) != (err != nil) {
			t.Errorf("%s: %v, %v; want %v", name, got, err, tc.want)
		}
		if !strings.Contains(fake.Scripts()[0], "beegfs-setup-storage -p /data/beegfs-storage -s 2 -i 201 -m 10.0.0.10") {
			t.Errorf("%s: script %q", name, fake.Scripts()[0])
		}
	}
	fake := &transporttest.Fake{T: t}
	if got, err := SetupStorage(context.Background(), fake, StorageSetup{Path: "/data/a,b", NodeNumID: 2, TargetID: 201, Mgmtd: "10.0.0.10"}); got != Failed || err == nil {
		t.Errorf("path that breaks the lists: %v, %v", got, err)
	}
}

// TestReadStorageHostAndWipe reads a target set up in a sandbox with this machine's shell,
// then wipes it.
func TestReadStorageHostAndWipe(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data", "beegfs-storage")
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"nodeNumID": "2\n", "targetNumID": "201\n", "chunk": "data"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf := readFixture(t, "storage-after-setup.conf")
	if err := os.WriteFile(filepath.Join(root, "etc", "beegfs-storage.conf"), conf, 0o600); err != nil {
		t.Fatal(err)
	}
	// This machine runs no systemd: a stand-in answers as systemctl does for units it lacks.
	const systemctl = `systemctl() { v=$1; shift; for u; do if [ "$v" = is-active ]; then echo inactive; else echo not-found; fi; done; }` + "\n"
	sh := transporttest.Shell{Rewrite: func(s string) string {
		return systemctl + strings.ReplaceAll(s, StorageConfPath, filepath.Join(root, "etc", "beegfs-storage.conf"))
	}}
	h, err := ReadStorageHost(context.Background(), sh, dir, 201)
	if err != nil {
		t.Fatal(err)
	}
	if string(h.Conf.Content) != string(conf) || h.DropIn.Exists || h.Mount.Target == "" || h.Service != (ServiceState{"inactive", "not-found"}) {
		t.Errorf("read %+v", h)
	}
	if err := CheckDirIDs(TargetIdentity{Directory: dir, NodeNumID: 2, TargetID: 201}, h.Dir); err != nil {
		t.Error(err)
	}
	if err := WipeTarget(context.Background(), sh, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after wipe: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		t.Errorf("the parent must stay: %v", err)
	}
}

func TestRemoveDropInScript(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}
	if err := RemoveDropIn(context.Background(), fake, StorageDropInPath(201)); err != nil {
		t.Fatal(err)
	}
	s := fake.Scripts()[0]
	if !strings.Contains(s, "p=/etc/systemd/system/beegfs-storage.service.d/target-201.conf") || !strings.Contains(s, "daemon-reload") {
		t.Errorf("script %q", s)
	}
	if err := RemoveDropIn(context.Background(), &transporttest.Fake{T: t}, "relative/x.conf"); err == nil {
		t.Error("a relative path was accepted")
	}
}

// Chunks are files under chunks/ or buddymir/; the target's own ID files are not.
func TestHoldsChunks(t *testing.T) {
	dir := t.TempDir()
	sh := transporttest.Shell{}
	if err := os.WriteFile(dir+"/targetNumID", []byte("101\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := HoldsChunks(context.Background(), sh, dir); err != nil || got {
		t.Fatalf("a target without chunks: %v %v", got, err)
	}
	if err := os.MkdirAll(dir+"/buddymir/u0/1A", 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := HoldsChunks(context.Background(), sh, dir); err != nil || got {
		t.Fatalf("empty chunk directories: %v %v", got, err)
	}
	if err := os.WriteFile(dir+"/buddymir/u0/1A/chunk", []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := HoldsChunks(context.Background(), sh, dir); err != nil || !got {
		t.Fatalf("a mirrored chunk: %v %v", got, err)
	}
	if _, err := HoldsChunks(context.Background(), sh, "relative/dir"); err == nil {
		t.Error("a relative directory was accepted")
	}
}

func TestCheckAwaitedIDs(t *testing.T) {
	want := TargetIdentity{Directory: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201}
	prepared := DirState{Exists: true, Format: []byte("version=3\n")}
	if err := CheckAwaitedIDs(want, prepared); err != nil {
		t.Errorf("no targetNumID: %v", err)
	}
	prepared.TargetNumID = []byte("201\n")
	if err := CheckAwaitedIDs(want, prepared); err != nil {
		t.Errorf("-i 201: %v", err)
	}
	prepared.TargetNumID = []byte("301\n")
	if err := CheckAwaitedIDs(want, prepared); err == nil || !strings.Contains(err.Error(), "set up as target 301") {
		t.Errorf("-i 301: %v", err)
	}
}

func TestWriteAwaitedIDsKeepsExistingFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, TargetNumIDFile), []byte("301\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteAwaitedIDs(context.Background(), transporttest.Shell{}, dir, IDFile{NodeNumIDFile, 2}, IDFile{TargetNumIDFile, 201})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{NodeNumIDFile: "2\n", TargetNumIDFile: "301\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
