package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeService answers every message with body, or refuses with refusal.
func fakeService(t *testing.T, body any) (host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() { _ = serve(ln, func(request) (any, error) { return body, nil }) }()
	h, p, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(p)
	return h, n
}

// closedPort is a port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	port, _ := strconv.Atoi(p)
	return port
}

func testKernel(t *testing.T, mgmtdPort int) (*kernel, *bytes.Buffer, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	auth := filepath.Join(dir, "conn.auth")
	if err := os.WriteFile(auth, []byte("secret-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "beegfs-client.conf")
	conf := "sysMgmtdHost = 127.0.0.1\nconnAuthFile = " + auth + "\nconnMgmtdPort = " + strconv.Itoa(mgmtdPort) + "\nsysMountSanityCheckMS = 300\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	k := &kernel{log: &kernelLogger{out: &out, prefix: "beegfs: mount(1): "}}
	opts := map[string]string{"cfgFile": cfg, "sysMgmtdHost": "127.0.0.1"}
	if !k.configure(opts) {
		t.Fatalf("configure: %s", out.String())
	}
	return k, &out, opts
}

func TestSanityCheckNeedsAllThreeServices(t *testing.T) {
	metaHost, metaPort := fakeService(t, nil)
	storageHost, storagePort := fakeService(t, nil)
	meta := registeredNode{Type: nodeMeta, ID: 1, Alias: "meta_login01", Addr: metaHost, Port: metaPort}
	storage := registeredNode{Type: nodeStorage, ID: 2, Alias: "storage_gpu01", Addr: storageHost, Port: storagePort}
	blocked := closedPort(t)
	tests := map[string]struct {
		mgmtd bool
		nodes nodesReply
		want  []string
	}{
		"all answer":      {true, nodesReply{Nodes: []registeredNode{meta, storage}, RootMeta: 1}, nil},
		"no mgmtd":        {false, nodesReply{}, []string{"Connect failed: beegfs-mgmtd@127.0.0.1:", lineMgmtTimeout}},
		"no root meta":    {true, nodesReply{Nodes: []registeredNode{storage}}, []string{"Retrieval of root directory entry failed", "(Error: Unknown node)"}},
		"no storage":      {true, nodesReply{Nodes: []registeredNode{meta}, RootMeta: 1}, []string{"No storage targets known.", "(Error: Unknown storage target)"}},
		"storage blocked": {true, nodesReply{Nodes: []registeredNode{meta, {Type: nodeStorage, ID: 2, Alias: "storage_gpu01", Addr: "127.0.0.1", Port: blocked}}, RootMeta: 1}, []string{"Connect failed: beegfs-storage@127.0.0.1:" + strconv.Itoa(blocked) + " (protocol: TCP)", "Connect failed on all available routes: storage_gpu01 [beegfs-storage:2]", "Retrieval of storage server free space info failed", "(Error: Communication error)"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			port := closedPort(t)
			if tc.mgmtd {
				_, port = fakeService(t, tc.nodes)
			}
			k, out, opts := testKernel(t, port)
			ok := k.mount(opts)
			if ok != (tc.want == nil) {
				t.Fatalf("mount = %v, log:\n%s", ok, out)
			}
			for _, w := range append(tc.want, map[bool]string{true: lineSanityFailed}[tc.want != nil]) {
				if !strings.Contains(out.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestKernelConfigRefusals(t *testing.T) {
	k, out, _ := testKernel(t, 1)
	k.conf["connAuthFile"] = ""
	if k.readAuth() || !strings.Contains(out.String(), lineNoAuthFile) {
		t.Errorf("empty connAuthFile: %s", out)
	}
	k.conf["connAuthFile"] = "/nonexistent/conn.auth"
	if k.readAuth() || !strings.Contains(out.String(), "Failed to open auth file: '/nonexistent/conn.auth'") {
		t.Errorf("missing connAuthFile: %s", out)
	}
	k.conf["connDisableAuthentication"] = "true"
	if !k.readAuth() {
		t.Errorf("connDisableAuthentication=true still checks the file")
	}
}
