package transport

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// With AcceptNewHostKeys a host no file knows is trusted on first contact and its key
// recorded, once, in the named file, which is created with its directory; a second pool (the
// next run) then checks the host against the recorded key.
func TestAcceptNewRecordsTheKeyOnFirstContact(t *testing.T) {
	ctx := testContext(t)
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv)
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "ssh", "known_hosts")
	cfg.AcceptNewHostKeys = true
	for range 2 {
		h, err := newTestPool(t).Host(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Run(ctx, "true", nil); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(cfg.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.SplitN(srv.knownHostsLine(), " ", 2)[1]
	want := "[127.0.0.1]:" + strconv.Itoa(srv.port()) + ",[" + cfg.Name + "]:" + strconv.Itoa(srv.port()) + " " + key + "\n"
	if string(data) != want {
		t.Errorf("known_hosts holds %q, want the one line %q", data, want)
	}
}

// A known host that offers another key is refused even with AcceptNewHostKeys, and the file
// is left as it was.
func TestAcceptNewRefusesAChangedKey(t *testing.T) {
	ctx := testContext(t)
	_, cfg := changedKeyHost(t)
	cfg.AcceptNewHostKeys = true
	before, err := os.ReadFile(cfg.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newTestPool(t).Host(ctx, cfg)
	assertHostKeyError(t, err, cfg.Name)
	after, err := os.ReadFile(cfg.KnownHostsFile)
	if err != nil || string(after) != string(before) {
		t.Errorf("known_hosts changed from %q to %q (%v)", before, after, err)
	}
}

// Without AcceptNewHostKeys (the default) an unknown host is refused and nothing is recorded.
func TestUnknownHostIsNotRecordedByDefault(t *testing.T) {
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv)
	_, err := newTestPool(t).Host(testContext(t), cfg)
	var hkErr *HostKeyError
	if !errors.As(err, &hkErr) || len(hkErr.Known) != 0 {
		t.Fatalf("got %v, want an unknown-host *HostKeyError", err)
	}
	if data, err := os.ReadFile(cfg.KnownHostsFile); err != nil || len(data) != 0 {
		t.Errorf("known_hosts holds %q (%v), want it left empty", data, err)
	}
}

func TestAppendKnownHostEndsTheLastLineFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, []byte("a ssh-ed25519 AAAA"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := appendKnownHost(path, "b ssh-ed25519 BBBB"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "a ssh-ed25519 AAAA\nb ssh-ed25519 BBBB\n" {
		t.Errorf("file is %q", data)
	}
}

func TestAcceptNewNeedsAKnownHostsFile(t *testing.T) {
	cfg := Config{Name: "gpu01", Address: "10.0.0.11", User: "admin", HostKeys: []string{"ssh-ed25519 AAAA"}, UseAgent: true, AcceptNewHostKeys: true}
	if err := cfg.withDefaults().validate(); err == nil || !strings.Contains(err.Error(), "known_hosts file") {
		t.Errorf("validate: %v, want a refusal naming the known_hosts file", err)
	}
}
