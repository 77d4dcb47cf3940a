package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/fakehost"
)

// fakeSudoPassword is the admin's sudo password on every fake host.
const fakeSudoPassword = "fake-sudo-password"

// fakeCluster is a cluster of fake hosts in the test process, for resource tests that need no
// lab and no root: the first host is the login node, the jump host of the others, as on the
// lab.
type fakeCluster struct {
	t       *testing.T
	names   []string
	servers map[string]*fakehost.Server
	keyPath string
	known   string
}

// newFakeCluster serves one fake host per name. When the test ends, anything the provider's
// scripts asked of a host that the fake does not model fails the test.
func newFakeCluster(t *testing.T, names ...string) *fakeCluster {
	t.Helper()
	dir := t.TempDir()
	client := fakehost.NewClient(t)
	c := &fakeCluster{t: t, names: names, servers: map[string]*fakehost.Server{},
		keyPath: filepath.Join(dir, "id_ed25519"), known: filepath.Join(dir, "known_hosts")}
	var known strings.Builder
	for _, n := range names {
		srv := fakehost.Serve(t, fakehost.NewHost(n), client)
		srv.SudoPassword = fakeSudoPassword
		c.servers[n] = srv
		known.WriteString(srv.KnownHostsLine() + "\n")
	}
	if err := os.WriteFile(c.keyPath, client.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.known, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range names {
			for _, u := range c.host(n).Unmodelled() {
				t.Errorf("%s: %s", n, u)
			}
		}
	})
	return c
}

func (c *fakeCluster) host(name string) *fakehost.Host { return c.servers[name].Host }

// provider is the provider block for the cluster, with extra added inside it.
func (c *fakeCluster) provider(extra string) string {
	var nodes strings.Builder
	for _, n := range c.names {
		srv := c.servers[n]
		fmt.Fprintf(&nodes, "  node {\n    name    = %q\n    address = %q\n    port    = %d\n  }\n", n, srv.Address(), srv.Port())
	}
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  known_hosts_file = %q
  sudo_password    = %q
  login_node       = %q
%s%s}
`, fakehost.AdminUser, c.keyPath, c.known, fakeSudoPassword, c.names[0], nodes.String(), extra)
}

// run runs a script as root on a fake host, as an administrator would by hand, and fails the
// test when it fails.
func (c *fakeCluster) run(name, script string) string {
	c.t.Helper()
	r := c.host(name).Run(script)
	if r.Status != 0 {
		c.t.Fatalf("%s: %s: status %d: %s", name, script, r.Status, r.Stderr)
	}
	return r.Stdout
}

// check is a TestCheckFunc (or CheckDestroy) that looks at the fake hosts.
func (c *fakeCluster) check(f func() error) func(*terraform.State) error {
	return func(*terraform.State) error { return f() }
}
