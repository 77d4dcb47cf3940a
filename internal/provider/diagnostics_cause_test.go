package provider

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Each diagnostic names the cause that happened, not another one: a lost connection is not a
// missing ufw, an apply stopped at the lock wrote nothing, port 0 is said once.
func TestDiagnosticsNameTheRealCause(t *testing.T) {
	lost := fmt.Errorf("read UFW state: %w", errors.New("command on gpu01 (10.0.0.11:22) did not complete: connection lost"))
	missing := fmt.Errorf("read UFW state: %w: %w", firewall.ErrNotInstalled, &transport.ExitError{Host: "gpu01", Status: 3, Stderr: "ufw is not installed (Debian package ufw)"})
	_, portErr := firewall.Rule{Port: "0"}.Normalize()
	notLocked := fmt.Errorf("slurm activation: wait for the lock of login01: %w: %w", transport.ErrNotLocked, context.Canceled)
	tests := []struct {
		name, got, want, not string
	}{
		{"lost connection reading UFW", firewallReadError("gpu01", lost).Detail(), "Nothing was changed", "Install ufw"},
		{"ufw missing", firewallReadError("gpu01", missing).Detail(), "Install ufw on the node", "Cannot Read"},
		{"port 0", ruleDiags(portErr)[0].Detail(), "port 0 is out of range", "port port"},
		{"activation stopped at the lock", slurmActivationAdvice(notLocked), "Nothing was read or written", "partly written"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, tt.want) || strings.Contains(tt.got, tt.not) {
			t.Errorf("%s: %q, want %q and not %q", tt.name, tt.got, tt.want, tt.not)
		}
	}
}

// A step that fails because the node could not be reached reports the connection, not the step.
func TestStepOnUnreachableNodeReportsTheConnection(t *testing.T) {
	pool := transport.NewPool()
	defer pool.Close()
	_, err := pool.Host(context.Background(), transport.Config{Name: "gpu01", Address: "127.0.0.1", Port: 1, User: "admin", KnownHostsFile: "/dev/null", UseAgent: true})
	first := nodeError("Cannot Read Firewall", "gpu01", "Reading UFW's files failed", adviceRead, err)
	second := nodeError("Cannot Read Firewall", "gpu01", "Reading UFW's files failed", adviceRead, err)
	if first.Summary() != "Cannot Connect To Node" || second.Summary() != "Node Unreachable" {
		t.Errorf("summaries %q then %q, want Cannot Connect To Node then Node Unreachable", first.Summary(), second.Summary())
	}
	// Terraform prints errors in the order of the configuration, so the short one may come
	// first: it must carry the cause too.
	if !strings.Contains(second.Detail(), err.Error()) {
		t.Errorf("the later error does not say why the node is unreachable: %q", second.Detail())
	}
}

// A node that does not answer may be down: the advice names offline = true. One that answered
// and broke off the SSH handshake is not down, and the advice stays with the provider's settings.
func TestUnreachableNodeAdviceNamesOffline(t *testing.T) {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	dial := func(port int) error {
		pool := transport.NewPool()
		defer pool.Close()
		_, err := pool.Host(context.Background(), transport.Config{Name: "gpu01", Address: "127.0.0.1", Port: port, User: "admin",
			KnownHostsFile: "/dev/null", PrivateKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), ConnectTimeout: 5 * time.Second})
		return err
	}
	if d := connectError("gpu01", dial(1)).Detail(); !strings.Contains(d, "offline = true") {
		t.Errorf("no TCP connection: %q, want the offline advice", d)
	}
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("listener address %v is not TCP", ln.Addr())
	}
	if d := connectError("gpu01", dial(addr.Port)).Detail(); strings.Contains(d, "offline") || !strings.Contains(d, "key and sudo settings") {
		t.Errorf("a handshake broken off: %q, want the settings advice without offline", d)
	}
}

// An offline node is not reported as one that could not be reached: nothing dialled it.
func TestOfflineNodeIsNotAConnectionFailure(t *testing.T) {
	c := newCluster(settings{overrides: []nodeOverride{{name: "gpu07", offline: true}}})
	_, err := c.host(context.Background(), "gpu07")
	d := connectError("gpu07", err)
	if d.Summary() != "Node Offline" || strings.Contains(d.Detail(), "Check that the node is up") {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
}
