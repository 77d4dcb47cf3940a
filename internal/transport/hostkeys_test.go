package transport

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

type testKeys struct {
	ed25519, ecdsa, rsa, other ssh.PublicKey
}

func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return testKeys{
		ed25519: mustPublicKey(t, edPub),
		ecdsa:   mustPublicKey(t, &ec.PublicKey),
		rsa:     mustPublicKey(t, &rk.PublicKey),
		other:   mustPublicKey(t, otherPub),
	}
}

func mustPublicKey(t *testing.T, k any) ssh.PublicKey {
	t.Helper()
	pub, err := ssh.NewPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func authorizedLine(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// writeKnownHosts writes a known_hosts with entries by name, by address,
// with a non-default port, hashed, and revoked.
func writeKnownHosts(t *testing.T, k testKeys, revoked ssh.PublicKey) string {
	t.Helper()
	lines := []string{
		"# lab hosts",
		knownhosts.Line([]string{"gpu01"}, k.ed25519),
		knownhosts.Line([]string{"10.0.0.11"}, k.ed25519),
		knownhosts.Line([]string{"10.0.0.11"}, k.ecdsa),
		knownhosts.Line([]string{"[10.0.0.12]:2222"}, k.rsa),
		knownhosts.Line([]string{knownhosts.HashHostname("10.0.0.13")}, k.ecdsa),
		"@revoked * " + authorizedLine(revoked),
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unknownHostAlgorithms is OpenSSH's preference, ed25519 first, for a host no key is known of.
var unknownHostAlgorithms = []string{"ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "rsa-sha2-512", "rsa-sha2-256"}

func TestHostKeyAlgorithms(t *testing.T) {
	k := newTestKeys(t)
	file := writeKnownHosts(t, k, k.other)
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"by address, two key types", Config{Name: "10.0.0.11", Address: "10.0.0.11", Port: 22}, []string{"ecdsa-sha2-nistp256", "ssh-ed25519"}},
		{"by name only", Config{Name: "gpu01", Address: "192.0.2.1", Port: 22}, []string{"ssh-ed25519"}},
		{"rsa on a non-default port", Config{Name: "gpu02", Address: "10.0.0.12", Port: 2222}, []string{"rsa-sha2-256", "rsa-sha2-512"}},
		{"port must match", Config{Name: "gpu02", Address: "10.0.0.12", Port: 22}, unknownHostAlgorithms},
		{"hashed entry", Config{Name: "gpu03", Address: "10.0.0.13", Port: 22}, []string{"ecdsa-sha2-nistp256"}},
		{"unknown host", Config{Name: "gpu09", Address: "10.0.0.19", Port: 22}, unknownHostAlgorithms},
		{"pinned key adds its type", Config{Name: "gpu09", Address: "10.0.0.19", Port: 22, HostKeys: []string{authorizedLine(k.rsa)}}, []string{"rsa-sha2-256", "rsa-sha2-512"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.KnownHostsFile = file
			checker, err := newHostKeyChecker(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := checker.algorithms(); !slices.Equal(got, tt.want) {
				t.Errorf("algorithms = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHostKeyCheck(t *testing.T) {
	k := newTestKeys(t)
	file := writeKnownHosts(t, k, k.other)
	remote := &net.TCPAddr{IP: net.ParseIP("10.0.0.11"), Port: 22}
	gpu01 := Config{Name: "gpu01", Address: "10.0.0.11", Port: 22, KnownHostsFile: file}
	tests := []struct {
		name        string
		cfg         Config
		offered     ssh.PublicKey
		wantErr     bool
		wantKnown   int
		wantRevoked bool
	}{
		{"known key", gpu01, k.ed25519, false, 0, false},
		{"second known key type", gpu01, k.ecdsa, false, 0, false},
		{"changed key", gpu01, k.rsa, true, 2, false},
		{"revoked key", gpu01, k.other, true, 0, true},
		{"unknown host", Config{Name: "gpu09", Address: "10.0.0.19", Port: 22, KnownHostsFile: file}, k.ed25519, true, 0, false},
		{"pinned key without known_hosts", Config{Name: "gpu09", Address: "10.0.0.19", Port: 22, HostKeys: []string{authorizedLine(k.rsa)}}, k.rsa, false, 0, false},
		{"wrong pinned key", Config{Name: "gpu09", Address: "10.0.0.19", Port: 22, HostKeys: []string{authorizedLine(k.rsa)}}, k.ed25519, true, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checker, err := newHostKeyChecker(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = checker.check(tt.cfg.hostPort(), remote, tt.offered)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				return
			}
			var hkErr *HostKeyError
			if !errors.As(err, &hkErr) {
				t.Fatalf("check returned %v, want *HostKeyError", err)
			}
			if len(hkErr.Known) != tt.wantKnown || hkErr.Revoked != tt.wantRevoked {
				t.Errorf("Known = %q, Revoked = %v; want %d known, revoked %v", hkErr.Known, hkErr.Revoked, tt.wantKnown, tt.wantRevoked)
			}
			if hkErr.Fingerprint != ssh.FingerprintSHA256(tt.offered) || hkErr.Algorithm != tt.offered.Type() {
				t.Errorf("error describes %s %s, want the offered key", hkErr.Algorithm, hkErr.Fingerprint)
			}
			if !strings.Contains(err.Error(), tt.cfg.Name) || !strings.Contains(err.Error(), hkErr.Fingerprint) {
				t.Errorf("message %q does not name the host and the offered fingerprint", err)
			}
		})
	}
}

func TestUnknownHostMessageSaysHowToAddTheKey(t *testing.T) {
	k := newTestKeys(t)
	file := writeKnownHosts(t, k, k.other)
	cfg := Config{Name: "gpu09", Address: "10.0.0.19", Port: 2222, KnownHostsFile: file}
	checker, err := newHostKeyChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	msg := checker.check(cfg.hostPort(), &net.TCPAddr{}, k.ed25519).Error()
	for _, want := range []string{"is not known", "[10.0.0.19]:2222,[gpu09]:2222 " + authorizedLine(k.ed25519), file, "host_keys"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestHostKeyCheckerRejectsBadPinnedKey(t *testing.T) {
	_, err := newHostKeyChecker(Config{Name: "gpu01", Address: "10.0.0.11", Port: 22, HostKeys: []string{"ssh-ed25519 not-base64"}})
	if err == nil {
		t.Fatal("a malformed pinned key was accepted")
	}
}
