package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testMgmtd serves a fresh database's BeeMsg handler on a loopback port.
func testMgmtd(t *testing.T, cfg *mgmtdConfig) (*mgmtd, string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "mgmtd.sqlite")
	if err := initMgmtdDB(db, ""); err != nil {
		t.Fatal(err)
	}
	opened, err := openMgmtdDB(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conn.auth"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret, err := authSecret(filepath.Join(dir, "conn.auth"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = defaultMgmtdConfig()
	}
	m := &mgmtd{cfg: cfg, db: opened, secret: secret, log: &mgmtdLog{level: "off"}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() { _ = serve(ln, m.handleBeeMsg) }()
	return m, ln.Addr().String()
}

func heartbeatCall(t *testing.T, addr, auth string, hb heartbeat) (heartbeatReply, error) {
	t.Helper()
	var rep heartbeatReply
	err := call(addr, 5*time.Second, msgHeartbeat, auth, hb, &rep)
	return rep, err
}

func TestMgmtdRegistersNodesAndTargets(t *testing.T) {
	m, addr := testMgmtd(t, nil)
	meta1, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeMeta, Port: portMeta, Token: "tok-a"})
	if err != nil || meta1.NodeID != 1 {
		t.Fatalf("first meta: %+v, %v", meta1, err)
	}
	meta2, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeMeta, Port: portMeta, Token: "tok-b"})
	if err != nil || meta2.NodeID != 2 {
		t.Fatalf("second meta: %+v, %v", meta2, err)
	}
	st, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeStorage, Port: portStorage, Targets: []heartbeatTarget{
		{TargetID: 101, StringID: "a"}, {StringID: "b"},
	}})
	if err != nil || st.NodeID != 1 || len(st.Targets) != 2 || st.Targets[0].TargetID != 101 || st.Targets[1].TargetID != 1 {
		t.Fatalf("storage: %+v, %v", st, err)
	}
	var nodes nodesReply
	if err := call(addr, 5*time.Second, msgNodes, m.secret, nil, &nodes); err != nil {
		t.Fatal(err)
	}
	if nodes.RootMeta != 1 {
		t.Errorf("root meta = %d, want the first meta node", nodes.RootMeta)
	}
	var got []string
	for _, n := range nodes.Nodes {
		got = append(got, n.Type+"/"+n.Alias+"/"+n.Addr)
	}
	want := "meta/node_meta_1/127.0.0.1 meta/node_meta_2/127.0.0.1 storage/node_storage_1/127.0.0.1 management/management/"
	if strings.Join(got, " ") != want {
		t.Errorf("nodes = %v, want %s", got, want)
	}
	var aliases []string
	for _, tg := range m.db.state.Targets {
		aliases = append(aliases, tg.Alias)
	}
	if strings.Join(aliases, " ") != "target_meta_1 target_meta_2 target_storage_101 target_storage_1" {
		t.Errorf("targets = %v", aliases)
	}
	// A known node keeps its ID; a wrong token is refused with the real text.
	if _, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeMeta, NodeID: 2, Port: portMeta, Token: "other"}); err == nil ||
		err.Error() != "Meta node node_meta_2[meta:2, uid:5] has already been registered and its registration token (other) does not match the stored token (tok-b)" {
		t.Errorf("token mismatch: %v", err)
	}
	if _, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeStorage, NodeID: 1, Targets: []heartbeatTarget{{TargetID: 101, StringID: "x"}}}); err == nil ||
		!strings.HasPrefix(err.Error(), "Storage target target_storage_101[storage:101, uid:8] has already been registered and its registration token (x)") {
		t.Errorf("target token mismatch: %v", err)
	}
}

func TestMgmtdRefusesWithoutSecretOrRegistration(t *testing.T) {
	cfg := defaultMgmtdConfig()
	cfg.RegistrationDisable = true
	m, addr := testMgmtd(t, cfg)
	if _, err := heartbeatCall(t, addr, "wrong", heartbeat{Type: nodeStorage}); err == nil {
		t.Error("a heartbeat without the secret was accepted")
	}
	if _, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeStorage}); err == nil || err.Error() != "Registration of new nodes is not allowed" {
		t.Errorf("registration-disable: %v", err)
	}
	if rep, err := heartbeatCall(t, addr, m.secret, heartbeat{Type: nodeClient, Alias: "client_a"}); err != nil || rep.NodeID != 1 {
		t.Errorf("clients must still register: %+v %v", rep, err)
	}
}

func TestMgmtdReachabilityAndDelete(t *testing.T) {
	m, addr := testMgmtd(t, nil)
	clock := time.Unix(1_000_000, 0)
	m.db.now = func() time.Time { return clock }
	for _, hb := range []heartbeat{{Type: nodeMeta}, {Type: nodeMeta}, {Type: nodeStorage, Targets: []heartbeatTarget{{TargetID: 101, StringID: "a"}}}} {
		if _, err := heartbeatCall(t, addr, m.secret, hb); err != nil {
			t.Fatal(err)
		}
	}
	for age, want := range map[time.Duration]string{0: "online", 91 * time.Second: "poffline", 181 * time.Second: "offline"} {
		got := m.db.apiTargets(clock.Add(age), 180*time.Second, m.cfg.CapPoolMeta, m.cfg.CapPoolStorage)[2].Reachability
		if got != want {
			t.Errorf("after %s: %s, want %s", age, got, want)
		}
	}
	if _, err := m.db.deleteTarget(entityID{Type: nodeMeta, ID: 1}, true); err == nil || err.Error() != "Only storage targets can be deleted directly" {
		t.Errorf("meta target delete: %v", err)
	}
	if _, err := m.db.deleteNode(entityID{Type: nodeStorage, ID: 1}, true); err == nil || err.Error() != "Node node_storage_1[storage:1, uid:7] still has targets assigned" {
		t.Errorf("storage node with targets: %v", err)
	}
	if _, err := m.db.deleteNode(entityID{Type: nodeMeta, ID: 1}, true); err == nil || !strings.HasSuffix(err.Error(), "has the root inode") {
		t.Errorf("root meta: %v", err)
	}
	if _, err := m.db.deleteNode(entityID{UID: managementUID}, true); err == nil || err.Error() != "Management node can not be deleted" {
		t.Errorf("management: %v", err)
	}
	if _, err := m.db.deleteTarget(entityID{Alias: "target_storage_101"}, false); err != nil || len(m.db.state.Targets) != 3 {
		t.Errorf("dry run: %v, %d targets", err, len(m.db.state.Targets))
	}
	if _, err := m.db.deleteTarget(entityID{Type: nodeStorage, ID: 101}, true); err != nil || len(m.db.state.Targets) != 2 {
		t.Errorf("delete: %v, %d targets", err, len(m.db.state.Targets))
	}
	if _, err := m.db.deleteTarget(entityID{Type: nodeStorage, ID: 101}, true); err == nil || err.Error() != "target storage:101 does not exist" {
		t.Errorf("second delete: %v", err)
	}
	if _, err := m.db.deleteNode(entityID{Type: nodeMeta, ID: 2}, true); err != nil || len(m.db.state.Targets) != 1 {
		t.Errorf("meta node delete takes its target: %v, %+v", err, m.db.state.Targets)
	}
	reopened, err := openMgmtdDB(m.db.path)
	if err != nil || len(reopened.state.Targets) != 1 || len(reopened.state.Nodes) != 3 {
		t.Errorf("the database keeps the deletes: %v %+v", err, reopened.state)
	}
}

// runMgmtd runs the command line and returns stdout, stderr and status.
func runMgmtd(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	status := mgmtdRun(args, &out, &errOut)
	return out.String(), errOut.String(), status
}

func TestMgmtdCommandLine(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mgmtd.toml")
	db := filepath.Join(dir, "sub", "mgmtd.sqlite")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("db-file = \"" + db + "\"\nlog-target = \"journald\"\n")
	for _, c := range []struct {
		args           []string
		out, err       string
		status         int
		setup          func()
		stderrContains bool
	}{
		{args: []string{"--config-file", cfg, "--init"}, out: "Created new database version 5 at \"" + db + "\".\n"},
		{args: []string{"--config-file", cfg, "--init"}, err: "Database file \"" + db + "\" already exists\nError: 1\n", status: 1},
		{args: []string{"--config-file", cfg, "--db-file", db + ".x", "--auth-disable", "--tls-disable"},
			err: "No accessible database file found at \"" + db + ".x\": No such file or directory (os error 2)\nIf you want to initialize a new system, refer to --help or doc.beegfs.io.\nError: 1\n", status: 1},
		{args: []string{"--config-file", cfg, "--auth-file", dir + "/none"},
			err: "Could not open authentication file \"" + dir + "/none\": No such file or directory (os error 2)\nError: 1\n", status: 1},
		{args: []string{"--config-file", dir + "/missing.toml"}, err: "Could not open config file at \"" + dir + "/missing.toml\": No such file or directory (os error 2)\nError: 1\n", status: 1},
		{args: []string{"--foo"}, err: "error: unexpected argument '--foo' found\n\nUsage: mgmtd [OPTIONS]\n\nFor more information, try '--help'.\n", status: 2},
		{args: []string{"--upgrade"}, out: "--upgrade is deprecated. Upgrading the database now happens automatically on running the management. Exiting.\n"},
		{args: []string{"--config-file", cfg, "--quota-enforce"}, err: "Invalid config: Quota enforcement requires quota being enabled\nError: 1\n", status: 1},
		{args: []string{"--version"}, out: mgmtdVersion + "\n"},
	} {
		out, errOut, status := runMgmtd(c.args...)
		if out != c.out || errOut != c.err || status != c.status {
			t.Errorf("%v:\n got %q %q %d\nwant %q %q %d", c.args, out, errOut, status, c.out, c.err, c.status)
		}
	}
}

func TestMgmtdTOML(t *testing.T) {
	shipped, err := os.ReadFile("../beegfs-mgmtd/etc/beegfs/beegfs-mgmtd.toml")
	if err != nil {
		t.Fatal(err)
	}
	c := defaultMgmtdConfig()
	if err := c.applyTOML(string(shipped)); err != nil {
		t.Errorf("the shipped file is refused: %v", err)
	}
	if !strings.Contains(string(shipped), "STAND-IN") {
		t.Error("the shipped file does not name itself a STAND-IN")
	}
	for _, line := range strings.Split(string(shipped), "\n") {
		if t2 := strings.TrimSpace(line); t2 != "" && !strings.HasPrefix(t2, "#") {
			t.Errorf("the real shipped file has every line commented out, this one is active: %q", line)
		}
	}
	for doc, want := range map[string]string{
		"db-file = \"/x/y.sqlite\"\nnode-offline-timeout = \"10s\"\n[cap-pool-meta-limits]\ninodes-low = \"10M\"\ninodes-emergency = 1\nspace-low = \"1GiB\"\nspace-emergency = \"1kB\"\nfoo = 1\n": "",
		"foo = 1\n":     "TOML parse error at line 1, column 1\n  |\n1 | foo = 1\n  | ^^^\nunknown field `foo`, expected one of `db-file`",
		"init = true\n": "unknown field `init`",
		"[cap-pool-meta-limits]\ninodes-low = \"10M\"\n": "TOML parse error at line 1, column 1\n  |\n1 | [cap-pool-meta-limits]\n  | ^^^^^^^^^^^^^^^^^^^^^^\nmissing field `inodes-emergency`",
		"tls-disable = \"yes\"\n":                        "invalid type: string \"yes\", expected a boolean",
		"beemsg-port = 70000\n":                          "invalid value: integer `70000`, expected u16",
		"log-level = \"loud\"\n":                         "unknown variant `loud`, expected one of `off`, `error`, `warn`, `info`, `debug`, `trace`",
		"[other]\nx = 1\n":                               "unknown field `other`",
		"tls-cert-file = /etc/cert\n":                    "string values must be quoted",
		"db-file = \"a\"\ndb-file = \"b\"\n":             "duplicate key `db-file`",
	} {
		c := defaultMgmtdConfig()
		err := c.applyTOML(doc)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q refused: %v", doc, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
		if want == "" && (c.DBFile != "/x/y.sqlite" || c.NodeOfflineTimeout != 10*time.Second || c.CapPoolMeta.SpaceLow != 1<<30 || c.CapPoolMeta.InodesLow != 10_000_000) {
			t.Errorf("%q read as %+v", doc, c)
		}
	}
}
