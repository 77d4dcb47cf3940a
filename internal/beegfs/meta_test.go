package beegfs

import (
	"context"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

const testUUID = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"

func TestMetaSetupNeeded(t *testing.T) {
	tests := []struct {
		name    string
		d       DirState
		wantRun bool
		wantErr string
	}{
		{"missing directory", DirState{}, true, ""},
		{"empty directory", DirState{Exists: true, Empty: true}, true, ""},
		{"initialised with the same ID is adopted", DirState{Exists: true, NodeNumID: []byte("1\n")}, false, ""},
		{"initialised with another ID", DirState{Exists: true, NodeNumID: []byte("3\n")}, false, "initialised as metadata node 3, not 1"},
		{"foreign content", DirState{Exists: true}, false, "no BeeGFS setup tool prepared it"},
		{"prepared without -s is adopted", DirState{Exists: true, Format: []byte("version=4\n")}, false, ""},
		{"garbage nodeNumID", DirState{Exists: true, NodeNumID: []byte("x\n")}, false, NodeNumIDFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := MetaSetupNeeded("/beegfs/meta", tt.d, 1)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || run != tt.wantRun {
				t.Errorf("run=%v err=%v, want run=%v", run, err, tt.wantRun)
			}
		})
	}
}

func TestMetaTarget(t *testing.T) {
	m := MetaHost{Mount: Mount{Target: "/beegfs", UUID: testUUID}}
	if got, err := m.Target("/beegfs/meta"); err != nil || got.FsUUID != testUUID {
		t.Errorf("target %+v, %v", got, err)
	}
	if _, err := (MetaHost{Mount: Mount{Target: "/", UUID: testUUID}}).Target("/beegfs/meta"); err == nil || !strings.Contains(err.Error(), "root filesystem") {
		t.Errorf("root filesystem accepted: %v", err)
	}
	if _, err := (MetaHost{Mount: Mount{Target: "/beegfs"}}).Target("/beegfs/meta"); err == nil {
		t.Error("a filesystem without UUID accepted")
	}
}

func TestConfigureMeta(t *testing.T) {
	r := release(t, "8.4.0")
	target := StorageTarget{Directory: "/beegfs/meta", FsUUID: testUUID}
	c, err := ConfigureMeta(r, readFixture(t, "beegfs-meta.conf"), target, "login01")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{KeyFsUUID: testUUID, KeyAllowFirstRunInit: "false", KeyMgmtdHost: "login01", KeyMetaDirectory: "/beegfs/meta"} {
		if got, _ := c.Get(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if strings.Contains(string(c.Bytes()), ","+testUUID) {
		t.Error("storeFsUUID written in the storage list form")
	}
	bare, err := ConfigureMeta(r, []byte("storeMetaDirectory =\n"), target, "10.0.0.10")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := bare.Get("connAuthFile"); got != ConnAuthPath {
		t.Errorf("connAuthFile = %q, want the shared secret", got)
	}
	if _, err := ConfigureMeta(r, []byte("storeMetaDirectory = /other\n"), target, "10.0.0.10"); err == nil {
		t.Error("switching the metadata store accepted")
	}
	if _, err := ConfigureMeta(r, nil, target, "a/b"); err == nil {
		t.Error("a bad management host accepted")
	}
}

func convergedMeta(t *testing.T) MetaHost {
	t.Helper()
	c, err := ConfigureMeta(release(t, "8.4.0"), readFixture(t, "beegfs-meta.conf"), StorageTarget{Directory: "/beegfs/meta", FsUUID: testUUID}, "10.0.0.10")
	if err != nil {
		t.Fatal(err)
	}
	d, err := MetaDropIn("/beegfs")
	if err != nil {
		t.Fatal(err)
	}
	return MetaHost{
		PackageVersion: "8.4.0",
		Service:        ServiceState{Active: "active", Enabled: "enabled"},
		Config:         FileState{Exists: true, Content: c.Bytes()},
		DropIn:         FileState{Exists: true, Content: d.Content},
		Mount:          Mount{Target: "/beegfs", UUID: testUUID},
		Dir:            DirState{Exists: true, NodeNumID: []byte("1\n")},
	}
}

func TestMetaProblems(t *testing.T) {
	r := release(t, "8.4.0")
	want := MetaWant{Dir: "/beegfs/meta", Mgmtd: "10.0.0.10", Mountpoint: "/beegfs", FsUUID: testUUID}
	if p := MetaProblems(convergedMeta(t), r, want); len(p) != 0 {
		t.Fatalf("converged host has problems %v", p)
	}
	edit := func(key, value string) func(*MetaHost) {
		return func(m *MetaHost) {
			c, err := ParseConf(m.Config.Content)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Set(key, value); err != nil {
				t.Fatal(err)
			}
			m.Config.Content = c.Bytes()
		}
	}
	tests := map[string]struct {
		change func(*MetaHost)
		want   string
	}{
		"first-run init on":       {edit(KeyAllowFirstRunInit, "true"), "interlock: storeAllowFirstRunInit"},
		"UUID as a list":          {edit(KeyFsUUID, ","+testUUID), "is a list"},
		"UUID of another fs":      {edit(KeyFsUUID, "11111111-2222-3333-4444-555555555555"), "has UUID " + testUUID},
		"mgmtd host edited":       {edit(KeyMgmtdHost, "10.0.0.99"), `sysMgmtdHost is "10.0.0.99"`},
		"drop-in removed":         {func(m *MetaHost) { m.DropIn = FileState{} }, "drop-in " + MetaDropInPath},
		"stopped":                 {func(m *MetaHost) { m.Service.Active = "failed" }, "beegfs-meta not running (failed)"},
		"filesystem not mounted":  {func(m *MetaHost) { m.Mount = Mount{Target: "/", UUID: "99999999-2222-3333-4444-555555555555"} }, "filesystem missing: /beegfs/meta is on /"},
		"another fs at /beegfs":   {func(m *MetaHost) { m.Mount.UUID = "99999999-2222-3333-4444-555555555555" }, "filesystem missing"},
		"config removed entirely": {func(m *MetaHost) { m.Config = FileState{} }, MetaConfPath + " missing"},
	}
	for name, tt := range tests {
		m := convergedMeta(t)
		tt.change(&m)
		got := strings.Join(MetaProblems(m, r, want), "; ")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: problems %q, want %q", name, got, tt.want)
		}
	}
}

func TestSetupMeta(t *testing.T) {
	used := &transport.ExitError{Host: "login01", Status: 1}
	tests := []struct {
		name  string
		reply transporttest.Reply
		want  Outcome
	}{
		{"new directory", transporttest.Reply{}, Initialised},
		{"used directory", transporttest.Reply{Stdout: " * ERROR: Storage directory is not empty. Initialization of non-empty directories is not allowed.\n", Err: used}, AlreadyInitialised},
	}
	for _, tt := range tests {
		fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{tt.reply}}
		got, err := SetupMeta(context.Background(), fake, "/beegfs/meta", 1, "10.0.0.10")
		if err != nil || got != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
		if !strings.Contains(fake.Calls[0].Script, SetupMetaTool+" -p /beegfs/meta -s 1 -m 10.0.0.10") {
			t.Errorf("%s: script %q", tt.name, fake.Calls[0].Script)
		}
	}
	fake := &transporttest.Fake{T: t}
	if _, err := SetupMeta(context.Background(), fake, "/beegfs/meta", 0, "10.0.0.10"); err == nil || len(fake.Calls) != 0 {
		t.Error("node ID 0 reached the host")
	}
}

func TestDisableMetaLeavesData(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}, {}}}
	if err := DisableMeta(context.Background(), fake, ServiceState{Active: "active", Enabled: "enabled"}); err != nil {
		t.Fatal(err)
	}
	scripts := strings.Join(fake.Scripts(), "\n")
	if !strings.Contains(scripts, "systemctl disable --now") || !strings.Contains(scripts, MetaDropInPath) {
		t.Errorf("scripts %q", scripts)
	}
	if strings.Contains(scripts, "/beegfs/meta") {
		t.Error("destroy touches the metadata directory")
	}
}

func TestDisableMetaUnitGone(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}
	if err := DisableMeta(context.Background(), fake, ServiceState{Active: "inactive", Enabled: "not-found"}); err != nil {
		t.Fatal(err)
	}
	scripts := strings.Join(fake.Scripts(), "\n")
	if strings.Contains(scripts, "systemctl disable") || !strings.Contains(scripts, MetaDropInPath) {
		t.Errorf("a unit systemd does not know is disabled, or its drop-in is kept: %q", scripts)
	}
}

func TestKeptMetaTarget(t *testing.T) {
	const other = "99999999-2222-3333-4444-555555555555"
	withConfUUID := func(uuid string) func(*MetaHost) {
		return func(m *MetaHost) {
			c, err := ParseConf(m.Config.Content)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Set(KeyFsUUID, uuid); err != nil {
				t.Fatal(err)
			}
			m.Config.Content = c.Bytes()
		}
	}
	tests := map[string]struct {
		change  func(*MetaHost)
		wantErr string
	}{
		"same filesystem":          {func(*MetaHost) {}, ""},
		"key removed by hand":      {withConfUUID(""), ""},
		"another fs mounted":       {func(m *MetaHost) { m.Mount.UUID = other }, "RAID array most likely did not assemble"},
		"root fs, nothing mounted": {func(m *MetaHost) { m.Mount = Mount{Target: "/"} }, "reports no filesystem UUID"},
		"key removed, another fs": {func(m *MetaHost) {
			withConfUUID("")(m)
			m.Mount.UUID = other
		}, "RAID array most likely did not assemble"},
		"config names another fs":    {withConfUUID(other), "storeFsUUID = " + other},
		"config in the storage form": {withConfUUID("," + testUUID), "storeFsUUID = ," + testUUID},
	}
	for name, tt := range tests {
		m := convergedMeta(t)
		tt.change(&m)
		got, err := KeptMetaTarget(m, "/beegfs/meta", testUUID)
		switch {
		case tt.wantErr == "" && (err != nil || got != StorageTarget{Directory: "/beegfs/meta", FsUUID: testUUID}):
			t.Errorf("%s: %+v, %v; want the recorded UUID kept", name, got, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v; want %q", name, err, tt.wantErr)
		}
	}
}

func TestCheckMetaStoreSwitch(t *testing.T) {
	initialised := DirState{Exists: true, NodeNumID: []byte("1\n")}
	tests := map[string]struct {
		store   MetaStore
		wantErr string
	}{
		"config names none":             {MetaStore{}, ""},
		"config names this directory":   {MetaStore{Directory: "/beegfs/meta2", Dir: initialised}, ""},
		"other store initialised":       {MetaStore{Directory: "/beegfs/meta", FsUUID: testUUID, Mount: Mount{Target: "/beegfs", UUID: testUUID}, Dir: initialised}, "initialised metadata store (nodeNumID 1)"},
		"other store never set up":      {MetaStore{Directory: "/beegfs/meta", FsUUID: testUUID, Mount: Mount{Target: "/beegfs", UUID: testUUID}}, ""},
		"other store's fs not mounted":  {MetaStore{Directory: "/beegfs/meta", FsUUID: testUUID, Mount: Mount{Path: "/", Target: "/"}}, "cannot be told"},
		"other store without interlock": {MetaStore{Directory: "/beegfs/meta", Mount: Mount{Target: "/"}}, ""},
	}
	for name, tt := range tests {
		err := CheckMetaStoreSwitch("/beegfs/meta2", tt.store)
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: %v; want %q", name, err, tt.wantErr)
		}
	}
}
