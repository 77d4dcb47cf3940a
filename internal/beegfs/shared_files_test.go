package beegfs

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestEnsureConnAuthOnThisMachine runs the real script against a temporary path: 128 bytes,
// mode 0400, created once and never replaced.
func TestEnsureConnAuthOnThisMachine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the script chowns to root")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "conn.auth")
	sh := transporttest.Shell{Rewrite: func(s string) string { return strings.ReplaceAll(s, ConnAuthPath, target) }}
	created, err := EnsureConnAuth(context.Background(), sh)
	if err != nil || !created {
		t.Fatalf("first call: created=%v err=%v", created, err)
	}
	first, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != ConnAuthSize || fi.Mode().Perm() != 0o400 {
		t.Errorf("secret is %d bytes, mode %v; want %d bytes, 0400", len(first), fi.Mode().Perm(), ConnAuthSize)
	}
	created, err = EnsureConnAuth(context.Background(), sh)
	if err != nil || created {
		t.Fatalf("second call: created=%v err=%v", created, err)
	}
	if second, _ := os.ReadFile(target); !bytes.Equal(first, second) {
		t.Error("an existing secret was replaced")
	}
	if leftovers, _ := filepath.Glob(target + ".gpucluster.*"); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestSelfSignedCert(t *testing.T) {
	key, err := GenerateTLSKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	certPEM, err := SelfSignedCert(key, TLSNames{Node: "login01", Address: "10.0.0.10"}, now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.VerifyHostname("login01"); err != nil {
		t.Error(err)
	}
	if err := cert.VerifyHostname("10.0.0.10"); err != nil {
		t.Error(err)
	}
	if !cert.NotAfter.After(now.Add(5 * 365 * 24 * time.Hour)) {
		t.Errorf("certificate expires %v", cert.NotAfter)
	}
	if bytes.Contains(certPEM, key) {
		t.Error("the certificate carries the key")
	}
	if _, err := SelfSignedCert([]byte("garbage"), TLSNames{Node: "x"}, now); err == nil || strings.Contains(err.Error(), "garbage") {
		t.Errorf("bad key: %v (must fail without quoting it)", err)
	}
}

func TestCopyProblems(t *testing.T) {
	tests := []struct {
		name               string
		wantAuth, wantCert string
		got                SharedCopy
		expected           string
	}{
		{"in sync", "a", "c", SharedCopy{"a", rootOnly, "c"}, ""},
		{"secret missing", "a", "c", SharedCopy{"", "", "c"}, ConnAuthPath + " missing on gpu01"},
		{"different cert", "a", "c", SharedCopy{"a", rootOnly, "x"}, "different " + TLSCertPath + " on gpu01"},
		{"7.x has no cert", "a", "", SharedCopy{"a", rootOnly, ""}, ""},
		{"secret readable by all", "a", "c", SharedCopy{"a", "root:root 644", "c"}, ConnAuthPath + " is root:root 644, want root:root 400 on gpu01"},
		{"secret owned by admin", "a", "c", SharedCopy{"a", "admin:admin 400", "c"}, ConnAuthPath + " is admin:admin 400, want root:root 400 on gpu01"},
	}
	for _, tt := range tests {
		got := strings.Join(CopyProblems("gpu01", tt.wantAuth, tt.wantCert, tt.got), "; ")
		if got != tt.expected {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.expected)
		}
	}
}

func TestSharedFilesModes(t *testing.T) {
	files := SharedFiles([]byte("s"), []byte("c"))
	if len(files) != 2 || files[0].Path != ConnAuthPath || files[0].Mode != 0o400 || files[1].Path != TLSCertPath || files[1].Mode != 0o644 {
		t.Errorf("shared files %+v", files)
	}
	if len(SharedFiles([]byte("s"), nil)) != 1 {
		t.Error("7.x copies a certificate it does not have")
	}
	if f := TLSKeyFile([]byte("k")); f.Mode != 0o400 || f.ExpectSHA256 != transport.Absent {
		t.Errorf("key file %+v: want 0400, written only where none exists", f)
	}
}

func TestWriteSharedFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cert  []byte
		paths []string
	}{
		{"7.x: conn.auth only", nil, []string{ConnAuthPath}},
		{"8.x: conn.auth and the certificate", []byte("CERT"), []string{ConnAuthPath, TLSCertPath}},
	} {
		files := &transporttest.Files{}
		if err := WriteSharedFiles(context.Background(), files, []byte("SECRET"), tc.cert); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var paths []string
		for _, f := range files.Written {
			paths = append(paths, f.Path)
		}
		if strings.Join(paths, " ") != strings.Join(tc.paths, " ") || string(files.Content[ConnAuthPath]) != "SECRET" {
			t.Errorf("%s: wrote %v (conn.auth %q), want %v", tc.name, paths, files.Content[ConnAuthPath], tc.paths)
		}
	}
}
