package provider

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

const gpu02Facts = `
data "gpucluster_node_facts" "gpu02" {
  node = "gpu02"
}`

var gpu02Reached = []statecheck.StateCheck{
	statecheck.ExpectKnownValue("data.gpucluster_node_facts.gpu02", tfjsonpath.New("hostname"), knownvalue.StringExact("gpu02")),
}

// Each way in that an admin may use: an ssh-agent, a key with a passphrase, and the classic
// sudo that the guide uses on Ubuntu 26.04 (sudo-rs, the lab's default sudo, is used everywhere else).
func TestAccProvider_authentication(t *testing.T) {
	l := lab.Require(t)
	encryptedKey := encryptedCopyOfAdminKey(t, l, "correct horse")
	t.Setenv("SSH_AUTH_SOCK", serveAgent(t, l))

	base := strings.Replace(providerConfig(l, ""), fmt.Sprintf("  private_key_file = %q\n", l.AdminKeyPath), "", 1)
	cases := map[string]struct {
		config  string
		wantErr string
	}{
		"ssh-agent":                   {config: base},
		"private key with passphrase": {config: providerConfig(l, fmt.Sprintf("  private_key_passphrase = %q\n", "correct horse"))},
		"wrong passphrase": {
			config:  providerConfig(l, fmt.Sprintf("  private_key_passphrase = %q\n", "wrong")),
			wantErr: `(?i)passphrase`,
		},
		"sudo.ws with password": {config: providerConfig(l, `  sudo_exe = "/usr/bin/sudo.ws"`+"\n")},
		// Proves sudo_exe is what runs: the case above would pass on the default sudo too.
		"sudo_exe not installed": {
			config:  providerConfig(l, `  sudo_exe = "/usr/bin/sudo.absent"`+"\n"),
			wantErr: `(?s)Sudo Failed.*sudo.absent`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			config := tc.config
			if strings.Contains(name, "passphrase") {
				config = strings.Replace(config, fmt.Sprintf("%q", l.AdminKeyPath), fmt.Sprintf("%q", encryptedKey), 1)
			}
			step := resource.TestStep{Config: config + gpu02Facts, ConfigStateChecks: gpu02Reached}
			if tc.wantErr != "" {
				step = resource.TestStep{Config: config + gpu02Facts, ExpectError: regexp.MustCompile(tc.wantErr)}
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{step},
			})
		})
	}
}

func encryptedCopyOfAdminKey(t *testing.T, l *lab.Lab, passphrase string) string {
	t.Helper()
	key, err := os.ReadFile(l.AdminKeyPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "admin_encrypted")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-p", "-P", "", "-N", passphrase, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -p: %v: %s", err, out)
	}
	return path
}

// serveAgent runs an in-process ssh-agent holding the lab admin key and returns its socket.
func serveAgent(t *testing.T, l *lab.Lab) string {
	t.Helper()
	pem, err := os.ReadFile(l.AdminKeyPath)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParseRawPrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: key}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	listener, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = agent.ServeAgent(keyring, conn)
				_ = conn.Close()
			}()
		}
	}()
	return sock
}
