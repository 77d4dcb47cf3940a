package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apiMgmtd is a test management service with its API on a loopback port,
// TLS with a fresh certificate unless tlsDisable, and the stand-in license.
type apiMgmtd struct {
	*mgmtd
	addr, dir string
}

func startAPIMgmtd(t *testing.T, tlsDisable bool) *apiMgmtd {
	t.Helper()
	cfg := defaultMgmtdConfig()
	cfg.TLSDisable, cfg.GRPCPort = tlsDisable, 0
	m, _ := testMgmtd(t, cfg)
	dir := filepath.Dir(m.db.path)
	if !tlsDisable {
		cert, key := selfSigned(t)
		cfg.TLSCertFile, cfg.TLSKeyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		writeTestFile(t, cfg.TLSCertFile, cert)
		writeTestFile(t, cfg.TLSKeyFile, key)
	}
	writeTestFile(t, filepath.Join(dir, "license.pem"), []byte(licenseMagic+"\nvalid-until = 2099-01-01T00:00:00Z\n"))
	lic, err := readLicense(filepath.Join(dir, "license.pem"))
	if err != nil || lic.Result != "valid" {
		t.Fatalf("license: %+v %v", lic, err)
	}
	m.license = lic
	if err := m.listenGRPC(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.grpc.Close() })
	go m.serveGRPC()
	port := m.grpc.Addr().(*net.TCPAddr).Port
	return &apiMgmtd{mgmtd: m, addr: "localhost:" + strconv.Itoa(port), dir: dir}
}

func writeTestFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		DNSNames: []string{"localhost"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// beegfs runs the command as root against the test service.
func (a *apiMgmtd) beegfs(args ...string) (string, string, int) {
	base := []string{"--mgmtd-addr", a.addr, "--auth-file", filepath.Join(a.dir, "conn.auth")}
	if a.cfg.TLSDisable {
		base = append(base, "--tls-disable")
	} else {
		base = append(base, "--tls-cert-file", a.cfg.TLSCertFile)
	}
	var out, errOut bytes.Buffer
	status := cliRun(append(args, base...), &out, &errOut, 0)
	return out.String(), errOut.String(), status
}

func (a *apiMgmtd) register(t *testing.T) {
	t.Helper()
	for _, hb := range []heartbeat{{Type: nodeMeta}, {Type: nodeStorage, Targets: []heartbeatTarget{{TargetID: 101, StringID: "a", SpaceTotal: 256 << 20, SpaceFree: 200 << 20}}}} {
		if _, err := a.db.register(hb, "10.0.0.10", false); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCLILists(t *testing.T) {
	a := startAPIMgmtd(t, false)
	a.register(t)
	out, errOut, status := a.beegfs("node", "list")
	want := "ID    TYPE        ALIAS           \n" +
		"m:1   meta        node_meta_1     \n" +
		"s:1   storage     node_storage_1  \n" +
		"mg:1  management  management      \n\n"
	if out != want || errOut != "" || status != 0 {
		t.Errorf("node list:\n%q\nwant\n%q\nstderr %q, status %d", out, want, errOut, status)
	}
	out, _, _ = a.beegfs("target", "list")
	want = "ID     TYPE     ALIAS               NODE  STORAGE_POOL  \n" +
		"m:1    meta     target_meta_1       m:1   (n/a)         \n" +
		"s:101  storage  target_storage_101  s:1   s:1           \n\n"
	if out != want {
		t.Errorf("target list:\n%q\nwant\n%q", out, want)
	}
	out, _, _ = a.beegfs("target", "list", "--state", "--capacity", "--node-type", "storage")
	if !strings.Contains(out, "REACHABILITY  LAST_CONTACT  CONSISTENCY  SYNC_STATE  CAP_POOL  SPACE     SPACE_USED        SPACE_FREE  INODES  INODES_USED  INODES_FREE  \n") ||
		!strings.Contains(out, "Online        0s ago        Good         Healthy               256.0MiB  56.0MiB (21.88%)  200.0MiB    -       -            -            \n") ||
		strings.Contains(out, "m:1") {
		t.Errorf("target list --state --capacity:\n%s", out)
	}
}

const tlsAlert = "WARNING: One or more health checks are failing, run 'beegfs health check' for more details. Set the global disable-alerts flag to turn off this message.\n"

func TestCLIDelete(t *testing.T) {
	a := startAPIMgmtd(t, true)
	a.register(t)
	out, errOut, status := a.beegfs("target", "delete", "101")
	// Without TLS, every successful command ends with the 8.4 alert.
	if out != "" || status != 0 || errOut != "Target can be deleted: target_storage_101[s:101, uid:6]\nDeleting a target might cause adverse effects to your file system and should only be done if no files using it are left. If you really want to delete the target, please add the --yes flag to the command.\n"+tlsAlert {
		t.Errorf("dry run: %q %q %d", out, errOut, status)
	}
	if _, errOut, status = a.beegfs("target", "delete", "s:101", "--yes"); status != 0 || !strings.HasPrefix(errOut, "Target deleted: target_storage_101[s:101, uid:6]\n") {
		t.Errorf("delete: %q %d", errOut, status)
	}
	if _, errOut, status = a.beegfs("target", "delete", "s:101", "--yes"); status != 1 || errOut != "Error: rpc error: code = Unknown desc = Delete target: target storage:101 does not exist\n" {
		t.Errorf("second delete: %q %d", errOut, status)
	}
	if _, errOut, status = a.beegfs("node", "delete", "meta:1", "--yes"); status != 1 || errOut != "Error: rpc error: code = Unknown desc = Delete node: The target belonging to meta node node_meta_1[meta:1, uid:3] has the root inode\n" {
		t.Errorf("root meta: %q %d", errOut, status)
	}
	if _, errOut, status = a.beegfs("node", "delete", "storage:1", "--yes"); status != 0 || errOut != "Node deleted: node_storage_1[s:1, uid:5]\n"+tlsAlert {
		t.Errorf("storage node: %q %d", errOut, status)
	}
	if _, errOut, status = a.beegfs("target", "delete"); status != 1 || errOut != "Error: accepts 1 arg(s), received 0\nUsage: delete <target> --help\n" {
		t.Errorf("no argument: %q %d", errOut, status)
	}
	var out2, err2 bytes.Buffer
	if status := cliRun([]string{"target", "delete", "101", "--mgmtd-addr", a.addr}, &out2, &err2, 1000); status != 1 || err2.String() != "Error: only root can use this command\n" {
		t.Errorf("non-root: %q %d", err2.String(), status)
	}
}

func TestCLIHealthCheck(t *testing.T) {
	a := startAPIMgmtd(t, false)
	a.register(t)
	out, errOut, status := a.beegfs("health", "check")
	for _, want := range []string{
		"Running Health Check for beegfs://" + a.addr,
		"✅ Management TLS -> Certificate expires in 365 days.",
		"✅ License Status -> No issues detected.",
		"\n✅ Reachability -> All targets are responding.\n✅ Consistency -> All mirrors are synchronized.\n",
		"✅ Mapping Status -> All targets are mapped to a storage node.\n\n",
		"No client mounts found, skipping connection checks\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("healthy check lacks %q:\n%s", want, out)
		}
	}
	if status != 0 || errOut != "" {
		t.Errorf("healthy check: status %d, stderr %q", status, errOut)
	}
	a.db.now = func() time.Time { return time.Now().Add(200 * time.Second) }
	a.license = &licenseInfo{Result: "invalid", Message: "none"}
	out, errOut, status = a.beegfs("health", "check", "--disable-emojis")
	for _, want := range []string{
		"(CRITICAL) License Status -> No valid license found. Run 'beegfs license' for more details.",
		"\n(CRITICAL) Reachability -> Not all targets are responding.\n",
		"Storage Targets\n---------------\nID     TYPE     ALIAS               NODE  STORAGE_POOL  REACHABILITY",
		"Offline",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("failing check lacks %q:\n%s", want, out)
		}
	}
	if status != 1 || errOut != "Error: one or more checks failed\n" {
		t.Errorf("failing check: status %d, stderr %q", status, errOut)
	}
}

func TestCLIConnectionErrors(t *testing.T) {
	plain := startAPIMgmtd(t, true)
	withTLS := startAPIMgmtd(t, false)
	auth := filepath.Join(plain.dir, "conn.auth")
	otherCert, _ := selfSigned(t)
	writeTestFile(t, filepath.Join(plain.dir, "other.pem"), otherCert)
	run := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		status := cliRun(args, &out, &errOut, 0)
		return errOut.String(), status
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"health", "check", "--mgmtd-addr", plain.addr, "--auth-file", auth, "--tls-cert-file", withTLS.cfg.TLSCertFile},
			"(hint: TLS does not appear to be enabled on the management, try setting tls-disable)"},
		{[]string{"health", "check", "--mgmtd-addr", withTLS.addr, "--auth-file", filepath.Join(withTLS.dir, "conn.auth"), "--tls-disable"},
			"error reading server preface: unexpected EOF\"\n(hint: TLS appears to be enabled on the management but disabled in CTL"},
		{[]string{"health", "check", "--mgmtd-addr", withTLS.addr, "--auth-file", filepath.Join(withTLS.dir, "conn.auth"), "--tls-cert-file", filepath.Join(plain.dir, "other.pem")},
			"failed to verify certificate"},
		{[]string{"node", "list", "--mgmtd-addr", plain.addr, "--tls-disable", "--auth-disable"},
			"Error: unable to proceed without a working management node: rpc error: code = Unauthenticated desc = Request requires authentication but no secret was provided\n"},
		{[]string{"node", "list", "--mgmtd-addr", plain.addr, "--tls-disable", "--auth-file", withTLS.cfg.TLSCertFile},
			"code = Unauthenticated desc = Request requires authentication but provided secret doesn't match\n"},
		{[]string{"node", "list", "--mgmtd-addr", "127.0.0.1:1", "--tls-disable", "--auth-disable"},
			"Error: unable to proceed without a working management node: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused\"\n"},
		{[]string{"node", "list", "--tls-disable", "--auth-disable"},
			"Error: unable to proceed without a working management node: unable to auto-configure the management address: BeeGFS does not appear to be mounted"},
		{[]string{"target", "list", "--mgmtd-addr", plain.addr, "--tls-cert-file", "/nonexistent/cert.pem"},
			"Error: reading certificate file failed: open /nonexistent/cert.pem: no such file or directory (hint: run 'beegfs --help' and review the options to configure TLS)\n"},
	} {
		got, status := run(c.args...)
		if status != 1 || !strings.Contains(got, c.want) {
			t.Errorf("%v: status %d\n%s\nwant %q", c.args, status, got, c.want)
		}
	}
}

func TestParseEntityID(t *testing.T) {
	storage := []string{nodeStorage}
	for in, want := range map[string]entityID{
		"101": {Type: nodeStorage, ID: 101}, "s:101": {Type: nodeStorage, ID: 101}, "storage:7": {Type: nodeStorage, ID: 7},
		"uid:9": {UID: 9}, "target_storage_101": {Alias: "target_storage_101"},
	} {
		if got, err := parseEntityID(in, storage); err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	if _, err := parseEntityID("m:1", storage); err == nil || err.Error() != "invalid id type specifier 'm' - accepted are 'storage', 'uid'" {
		t.Errorf("meta for a target: %v", err)
	}
	if got, err := parseEntityID("meta:2", []string{nodeClient, nodeMeta, nodeStorage}); err != nil || got != (entityID{Type: nodeMeta, ID: 2}) {
		t.Errorf("meta:2: %+v %v", got, err)
	}
}
