package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p, content string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDaemonConfArgsOverrideFile(t *testing.T) {
	cfg := writeFile(t, filepath.Join(t.TempDir(), "beegfs-storage.conf"),
		"# comment\nsysMgmtdHost                 = login01\nstoreStorageDirectory = ,/data/a ,/data/b\nlogType = syslog \nrunDaemonized=true\nsysMgmtdHost = mgmt\n")
	c, err := loadDaemonConf([]string{"cfgFile=" + cfg, "runDaemonized=false"}, map[string]string{"connMgmtdPort": "8008", "logType": "logfile"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"sysMgmtdHost": "mgmt", "runDaemonized": "false", "logType": "syslog", "connMgmtdPort": "8008"} {
		if c[k] != want {
			t.Errorf("%s = %q, want %q", k, c[k], want)
		}
	}
	if got := c.list("storeStorageDirectory"); !reflect.DeepEqual(got, []string{"/data/a", "/data/b"}) {
		t.Errorf("storeStorageDirectory = %q", got)
	}
}

func TestLoadDaemonConfMissingFile(t *testing.T) {
	_, err := loadDaemonConf([]string{"cfgFile=/nonexistent/x.conf"}, nil)
	if _, ok := err.(configError); !ok || err.Error() != "Failed to load map file: /nonexistent/x.conf" {
		t.Errorf("err = %#v", err)
	}
}

func TestListDropsEmptyElements(t *testing.T) {
	for in, want := range map[string][]string{
		",/data/a":             {"/data/a"},
		"/data/a":              {"/data/a"},
		" , /data/a ,,/data/b": {"/data/a", "/data/b"},
		",":                    nil,
		"":                     nil,
	} {
		if got := (daemonConf{"k": in}).list("k"); !reflect.DeepEqual(got, want) {
			t.Errorf("list(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAuthFile(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "conn.auth"), "0123456789")
	short := writeFile(t, filepath.Join(dir, "short"), "abc")
	tests := []struct {
		conf    daemonConf
		want    string
		invalid bool // InvalidConfigException (exit 1) rather than ConnAuthFileException (exit 3)
	}{
		{daemonConf{"connAuthFile": good}, "", false},
		{daemonConf{"connDisableAuthentication": "true"}, "", false},
		{daemonConf{}, "No connAuthFile configured. Using BeeGFS without connection authentication is considered insecure", false},
		{daemonConf{"connAuthFile": dir + "/none"}, "Unable to open auth file: " + dir + "/none (SysErr: No such file or directory)", false},
		{daemonConf{"connAuthFile": short}, "Auth file is empty: " + short, true},
	}
	for _, tt := range tests {
		_, err := tt.conf.authFile()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tt.conf, err)
			}
			continue
		}
		_, isConfig := err.(configError)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || isConfig != tt.invalid {
			t.Errorf("%v: err %v (config error %v), want %q", tt.conf, err, isConfig, tt.want)
		}
	}
}

func TestDeprecateStringIDFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "originalNodeID"), "gpu02\n")
	deprecateStringIDFiles(dir)
	if exists(filepath.Join(dir, "originalNodeID")) {
		t.Error("originalNodeID is still there")
	}
	got, err := os.ReadFile(filepath.Join(dir, "originalNodeID.v7"))
	if err != nil || !strings.HasPrefix(string(got), "gpu02\n\n# String IDs have been deprecated starting with BeeGFS 8.") {
		t.Errorf("originalNodeID.v7 = %q, %v", got, err)
	}
}

// fakeMgmtd answers heartbeats as the management service does: a new node
// and new targets get IDs, refuse makes it refuse.
func fakeMgmtd(t *testing.T, refuse string) (port string, got chan heartbeat) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	got = make(chan heartbeat, 10)
	go func() {
		_ = serve(ln, func(req request) (any, error) {
			if req.Msg != msgHeartbeat {
				return nodesReply{}, nil
			}
			var hb heartbeat
			if err := json.Unmarshal(req.Body, &hb); err != nil {
				return nil, err
			}
			got <- hb
			if refuse != "" {
				return nil, refusal{refuse}
			}
			rep := heartbeatReply{NodeID: hb.NodeID}
			if rep.NodeID == 0 {
				rep.NodeID = 9
			}
			for i, tg := range hb.Targets {
				if tg.TargetID == 0 {
					tg.TargetID = uint32(900 + i)
				}
				rep.Targets = append(rep.Targets, tg)
			}
			return rep, nil
		})
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, got
}

func startStorage(t *testing.T, port string, dirs ...string) *daemon {
	t.Helper()
	s := t.TempDir()
	auth := writeFile(t, filepath.Join(s, "conn.auth"), "secret-secret")
	d := &daemon{spec: storageSpec()}
	if err := d.start([]string{"sysMgmtdHost=127.0.0.1", "connMgmtdPort=" + port, "connAuthFile=" + auth,
		"storeStorageDirectory=," + strings.Join(dirs, ","), "logType=logfile", "logStdFile=" + s + "/log"}); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStorageRegistersAndWritesItsFiles(t *testing.T) {
	port, got := fakeMgmtd(t, "")
	dir := filepath.Join(t.TempDir(), "target")
	d := startStorage(t, port, dir)
	if err := d.register(); err != nil {
		t.Fatal(err)
	}
	hb := <-got
	if hb.Type != nodeStorage || hb.NodeID != 0 || len(hb.Targets) != 1 || hb.Targets[0].Path != dir || hb.Targets[0].StringID == "" {
		t.Errorf("heartbeat = %+v", hb)
	}
	for file, want := range map[string]string{"nodeNumID": "9\n", "targetNumID": "900\n", "format.conf": "# This file was auto-generated. Do not modify it!\nversion=3\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, file)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", file, b, err, want)
		}
	}
	for _, p := range []string{"chunks", "buddymir", "targetID", "lock.pid"} {
		if !exists(filepath.Join(dir, p)) {
			t.Errorf("%s missing", p)
		}
	}
	if exists(filepath.Join(dir, "originalNodeID")) {
		t.Error("wrote originalNodeID")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "lock.pid")); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("lock.pid = %q", b)
	}
}

func TestRegistrationRefused(t *testing.T) {
	port, _ := fakeMgmtd(t, "node ID 3 is taken")
	d := startStorage(t, port, filepath.Join(t.TempDir(), "target"))
	err := d.register()
	if _, ok := err.(configError); !ok || err.Error() != "Node pre-registration at management node canceled" {
		t.Errorf("err = %#v", err)
	}
}

func TestStorageRefusesUninitialisedTarget(t *testing.T) {
	dir := t.TempDir()
	d := &daemon{spec: storageSpec()}
	err := d.start([]string{"connDisableAuthentication=true", "storeAllowFirstRunInit=false", "storeStorageDirectory=," + dir})
	if err == nil || err.Error() != "Found uninitialized storage target directory and initialization has been disabled: "+dir {
		t.Errorf("err = %v", err)
	}
	writeFile(t, filepath.Join(dir, "format.conf"), "version=3\n")
	d = &daemon{spec: storageSpec()}
	err = d.start([]string{"connDisableAuthentication=true", "storeAllowFirstRunInit=false", "storeStorageDirectory=," + dir, "storeFsUUID=,a,b"})
	for _, l := range d.locks {
		_ = l.Close()
	}
	if err == nil || err.Error() != "Storage path list and storage UUID list have different sizes" {
		t.Errorf("err = %v", err)
	}
	d = &daemon{spec: storageSpec()}
	err = d.start([]string{"connDisableAuthentication=true", "storeAllowFirstRunInit=false", "storeStorageDirectory=" + dir, "storeFsUUID=,"})
	if err == nil || err.Error() != "Management host undefined" {
		t.Errorf("err = %v, want the management host refusal after an empty storeFsUUID skipped the check", err)
	}
}
