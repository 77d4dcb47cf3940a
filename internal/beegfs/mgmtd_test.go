package beegfs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units/unitstest"
)

func release(t *testing.T, v string) Release {
	t.Helper()
	r, err := ParseRelease(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSetMgmtdStore(t *testing.T) {
	v8, v7 := release(t, "8.4.0-0labstandin1"), release(t, "7.4.6")
	fixture := readFixture(t, "beegfs-mgmtd.toml")
	tests := []struct {
		name    string
		r       Release
		content string
		want    []string // lines the result must contain
		wantErr string
	}{
		{"8.x sets db-file at top level", v8, string(fixture), []string{`db-file = "/beegfs/mgmtd/mgmtd.sqlite"`}, ""},
		{"8.x rewrites an existing db-file", v8, "db-file = \"/old/x.sqlite\"\n", []string{`db-file = "/beegfs/mgmtd/mgmtd.sqlite"`}, ""},
		{"8.x refuses an auth-file the provider does not write", v8, "auth-file = \"/root/secret\"\n", nil, `auth-file = "/root/secret"`},
		{"8.x refuses another TLS key", v8, "tls-key-file = \"/k.pem\"\n", nil, "tls-key-file"},
		{"7.x sets the store directory", v7, "storeMgmtdDirectory =\n", []string{"storeMgmtdDirectory = /beegfs/mgmtd"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetMgmtdStore(tt.r, []byte(tt.content), "/beegfs/mgmtd/mgmtd.sqlite")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			again, err := SetMgmtdStore(tt.r, got, "/beegfs/mgmtd/mgmtd.sqlite")
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("second edit changed the file (err %v):\n%s", err, again)
			}
		})
	}
	// The setting must stay top-level, before the shipped file's first
	// (commented-out) table, even once an admin uncomments the tables.
	got, _ := SetMgmtdStore(v8, fixture, "/beegfs/mgmtd/mgmtd.sqlite")
	if strings.Index(string(got), "\ndb-file = ") > strings.Index(string(got), "[cap-pool-meta-limits]") {
		t.Errorf("db-file landed below a table:\n%s", got)
	}
}

func TestMgmtdStoreReadsBack(t *testing.T) {
	r := release(t, "8.4.0")
	content, err := SetMgmtdStore(r, readFixture(t, "beegfs-mgmtd.toml"), "/beegfs/mgmtd/mgmtd.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := MgmtdStore(r, content)
	if err != nil || !ok || got != "/beegfs/mgmtd/mgmtd.sqlite" {
		t.Errorf("MgmtdStore = %q, %v, %v", got, ok, err)
	}
	if _, ok, _ := MgmtdStore(r, readFixture(t, "beegfs-mgmtd.toml")); ok {
		t.Error("a commented-out db-file reads as set")
	}
}

func TestValidateDBFile(t *testing.T) {
	for in, ok := range map[string]bool{
		"/beegfs/mgmtd/mgmtd.sqlite": true,
		"/mgmtd.sqlite":              false,
		"relative/x.sqlite":          false,
		"/beegfs/a b/x.sqlite":       false,
		"/beegfs/../etc/x":           false,
	} {
		if err := ValidateDBFile(in); (err == nil) != ok {
			t.Errorf("ValidateDBFile(%q) = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestMgmtdReleaseAndInitialised(t *testing.T) {
	if _, err := (MgmtdHost{}).Release(); !IsNotInstalled(err) || !strings.Contains(err.Error(), MgmtdPackage) {
		t.Errorf("missing package: %v", err)
	}
	if _, err := (MgmtdHost{PackageVersion: "9.0.0"}).Release(); err == nil || IsNotInstalled(err) {
		t.Errorf("unsupported major: %v", err)
	}
	v8, v7 := release(t, "8.4.0"), release(t, "7.4.6")
	cases := []struct {
		name string
		m    MgmtdHost
		r    Release
		want bool
	}{
		{"8.x database present", MgmtdHost{DBSHA256: "ab"}, v8, true},
		{"8.x database missing, directory used", MgmtdHost{StoreDir: DirState{Exists: true}}, v8, false},
		{"7.x store directory used", MgmtdHost{StoreDir: DirState{Exists: true}}, v7, true},
		{"7.x store directory empty", MgmtdHost{StoreDir: DirState{Exists: true, Empty: true}}, v7, false},
	}
	for _, c := range cases {
		if got := c.m.Initialised(c.r); got != c.want {
			t.Errorf("%s: Initialised = %v", c.name, got)
		}
	}
}

func convergedMgmtd(t *testing.T) MgmtdHost {
	t.Helper()
	r := release(t, "8.4.0")
	content, err := SetMgmtdStore(r, readFixture(t, "beegfs-mgmtd.toml"), "/beegfs/mgmtd/mgmtd.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	d, err := MgmtdDropIn("/beegfs")
	if err != nil {
		t.Fatal(err)
	}
	return MgmtdHost{
		PackageVersion: "8.4.0",
		Service:        ServiceState{Active: "active", Enabled: "enabled"},
		TOML:           FileState{Exists: true, Content: content},
		DropIn:         FileState{Exists: true, Content: d.Content},
		Mount:          Mount{Target: "/beegfs", UUID: testUUID},
		DBSHA256:       "db", ConnAuthSHA256: "a", CertSHA256: "c", KeySHA256: "k",
	}
}

func TestMgmtdProblems(t *testing.T) {
	r := release(t, "8.4.0")
	if p := MgmtdProblems(convergedMgmtd(t), r, "/beegfs/mgmtd/mgmtd.sqlite", "/beegfs", testUUID); len(p) != 0 {
		t.Fatalf("converged host has problems %v", p)
	}
	tests := map[string]struct {
		change func(*MgmtdHost)
		want   string
	}{
		"db-file edited":  {func(m *MgmtdHost) { m.TOML.Content = []byte("db-file = \"/x/y\"\n") }, "does not set db-file"},
		"drop-in removed": {func(m *MgmtdHost) { m.DropIn = FileState{} }, "drop-in " + MgmtdDropInPath},
		"stopped":         {func(m *MgmtdHost) { m.Service.Active = "inactive" }, "beegfs-mgmtd not running (inactive)"},
		"disabled":        {func(m *MgmtdHost) { m.Service.Enabled = "disabled" }, "beegfs-mgmtd not enabled"},
		"secret missing":  {func(m *MgmtdHost) { m.ConnAuthSHA256 = "" }, ConnAuthPath + " missing"},
		"key missing":     {func(m *MgmtdHost) { m.KeySHA256 = "" }, TLSKeyPath + " missing"},
		"fs not mounted":  {func(m *MgmtdHost) { m.Mount = Mount{Target: "/", UUID: "root"} }, "filesystem missing: /beegfs/mgmtd is on /"},
		"another fs":      {func(m *MgmtdHost) { m.Mount.UUID = "other" }, "filesystem missing"},
	}
	for name, tt := range tests {
		m := convergedMgmtd(t)
		tt.change(&m)
		got := strings.Join(MgmtdProblems(m, r, "/beegfs/mgmtd/mgmtd.sqlite", "/beegfs", testUUID), "; ")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: problems %q, want %q", name, got, tt.want)
		}
	}
	// 7.x has no TLS files to miss.
	m := convergedMgmtd(t)
	m.KeySHA256, m.CertSHA256 = "", ""
	m.ConfV7 = FileState{Exists: true, Content: []byte("storeMgmtdDirectory = /beegfs/mgmtd\n")}
	if got := MgmtdProblems(m, release(t, "7.4.6"), "/beegfs/mgmtd/mgmtd.sqlite", "/beegfs", testUUID); len(got) != 0 {
		t.Errorf("7.x problems %v", got)
	}
}

func TestInitMgmtd(t *testing.T) {
	exists := &transport.ExitError{Host: "login01", Status: 1, Stderr: "Error: Creating database file /beegfs/mgmtd/mgmtd.sqlite failed: File exists (os error 17)"}
	tests := []struct {
		name       string
		r          Release
		reply      transporttest.Reply
		want       Outcome
		wantScript []string
	}{
		{"8.x initialises", release(t, "8.4.0"), transporttest.Reply{}, Initialised, []string{"mkdir -p -m 0700 /beegfs/mgmtd", MgmtdDaemon + " --init"}},
		{"8.x existing database", release(t, "8.4.0"), transporttest.Reply{Err: exists}, AlreadyInitialised, nil},
		{"7.x setup script", release(t, "7.4.6"), transporttest.Reply{}, Initialised, []string{SetupMgmtdTool + " -p /beegfs/mgmtd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{tt.reply}}
			got, err := InitMgmtd(context.Background(), fake, tt.r, "/beegfs/mgmtd/mgmtd.sqlite")
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			for _, w := range tt.wantScript {
				if !strings.Contains(fake.Calls[0].Script, w) {
					t.Errorf("script lacks %q:\n%s", w, fake.Calls[0].Script)
				}
			}
		})
	}
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: &transport.ExitError{Host: "login01", Status: 1, Stderr: "Error: permission denied"}}}}
	if got, err := InitMgmtd(context.Background(), fake, release(t, "8.4.0"), "/beegfs/mgmtd/mgmtd.sqlite"); got != Failed || err == nil {
		t.Errorf("another failure: %v, %v", got, err)
	}
}

func TestDisableMgmtd(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}, {}}}
	running := ServiceState{Active: "active", Enabled: "enabled"}
	if err := DisableMgmtd(context.Background(), fake, running); err != nil {
		t.Fatal(err)
	}
	scripts := strings.Join(fake.Scripts(), "\n")
	for _, w := range []string{"systemctl disable --now", MgmtdDropInPath, "daemon-reload"} {
		if !strings.Contains(scripts, w) {
			t.Errorf("scripts lack %q", w)
		}
	}
	if strings.Contains(scripts, "rm -rf") || strings.Contains(scripts, "/beegfs/mgmtd") {
		t.Error("destroy touches the database")
	}
	failing := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: errors.New("boom")}}}
	if err := DisableMgmtd(context.Background(), failing, running); err == nil {
		t.Error("a failed stop is not reported")
	}
	gone := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}
	if err := DisableMgmtd(context.Background(), gone, ServiceState{Active: "inactive", Enabled: "not-found"}); err != nil {
		t.Fatalf("a unit systemd does not know: %v", err)
	}
	if s := strings.Join(gone.Scripts(), "\n"); strings.Contains(s, "systemctl disable") || !strings.Contains(s, MgmtdDropInPath) {
		t.Errorf("a unit systemd does not know: scripts %q", s)
	}
}

// A node's copies come from the host's shared read, in the form CopyProblems compares.
func TestReadSharedCopy(t *testing.T) {
	const sum = "d795bc42b84290bfb7f00acdcb1136adc62622d81da0d86e7ffdb5dff96a58b2"
	out := unitstest.OutWithFile(ServiceMgmtd+".service", units.State{Active: "active", Enabled: "enabled"}, ConnAuthPath,
		units.File{Exists: true, SHA256: sum, Owner: "root", Group: "root", Mode: 0o400})
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: out}, {Stdout: out}}}
	got, err := ReadSharedCopy(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if want := (SharedCopy{ConnAuthSHA256: sum, ConnAuthPerm: "root:root 400"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if s := f.Scripts(); s[0] != s[1] || !strings.Contains(s[0], "systemctl is-active") {
		t.Errorf("the copies are not read in the host's shared read:\n%s", strings.Join(s, "\n---\n"))
	}
}

// The store the service runs on is the config's db-file, or where --init puts it without one.
func TestConfiguredMgmtdStore(t *testing.T) {
	v8, v7 := release(t, "8.4.0-0labstandin1"), release(t, "7.4.6")
	tests := []struct {
		name    string
		r       Release
		content string
		want    string
	}{
		{"8.x as shipped: the service's default", v8, string(readFixture(t, "beegfs-mgmtd.toml")), DefaultMgmtdDBFile},
		{"8.x db-file set", v8, "db-file = \"/beegfs/old/mgmtd.sqlite\"\n", "/beegfs/old/mgmtd.sqlite"},
		{"7.x store directory set", v7, "storeMgmtdDirectory = /beegfs/mgmtd\n", "/beegfs/mgmtd"},
		{"7.x none set", v7, "storeMgmtdDirectory =\n", ""},
	}
	for _, tt := range tests {
		got, err := ConfiguredMgmtdStore(tt.r, []byte(tt.content))
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// A create may adopt the database at db_file, never leave behind another one the service runs on.
func TestLiveMgmtdStore(t *testing.T) {
	v8 := release(t, "8.4.0-0labstandin1")
	const dbFile = "/beegfs/mgmtd/mgmtd.sqlite"
	toml := func(content string) MgmtdHost {
		return MgmtdHost{TOML: FileState{Exists: true, Content: []byte(content)}}
	}
	// The config naming db_file itself needs no second read: a nil executor would panic.
	for name, m := range map[string]MgmtdHost{
		"config names db_file": toml("db-file = \"" + dbFile + "\"\n"),
		"no config":            {},
	} {
		if live, err := ReadLiveMgmtdStore(context.Background(), nil, m, v8, dbFile); err != nil || live.Path != "" {
			t.Errorf("%s: %+v, %v; want nothing to check", name, live, err)
		}
	}
	if err := CheckLiveMgmtdStore(v8, dbFile, LiveMgmtdStore{Path: DefaultMgmtdDBFile}); err != nil {
		t.Errorf("a configured database that does not exist: %v", err)
	}
	err := CheckLiveMgmtdStore(v8, dbFile, LiveMgmtdStore{Path: DefaultMgmtdDBFile, Exists: true})
	if err == nil || !strings.Contains(err.Error(), "points beegfs-mgmtd at "+DefaultMgmtdDBFile+" (db-file), which exists") || !strings.Contains(err.Error(), "new, empty store") {
		t.Errorf("a live database elsewhere: %v", err)
	}
	if _, err := ReadLiveMgmtdStore(context.Background(), nil, toml("db-file = \"/a b/x.sqlite\"\n"), v8, dbFile); err == nil || !strings.Contains(err.Error(), "cannot be checked") {
		t.Errorf("a db-file that cannot be quoted: %v", err)
	}
}
