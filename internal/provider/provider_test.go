package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"gpucluster": providerserver.NewProtocol6WithError(New("test")()),
}

// providerConfig points the provider at the lab the way an admin points it at a cluster:
// key file, known_hosts, sudo password, login01 as jump host. extra is added inside the block.
func providerConfig(l *lab.Lab, extra string) string {
	var nodes strings.Builder
	for _, h := range l.Hosts {
		fmt.Fprintf(&nodes, "  node {\n    name    = %q\n    address = %q\n  }\n", h.Name, h.Address)
	}
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  known_hosts_file = %q
  sudo_password    = %q
  login_node       = "login01"
%s%s
}
`, l.AdminUser, l.AdminKeyPath, l.KnownHostsPath, l.AdminPassword, nodes.String(), extra)
}

func labNodeNames(l *lab.Lab) []string {
	names := make([]string, len(l.Hosts))
	for i, h := range l.Hosts {
		names[i] = h.Name
	}
	return names
}

func hclList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// onHost runs a script as root inside a lab host through the lab's own seam, never through
// the provider, so checks and hand-made drift do not depend on the code under test.
func onHost(t *testing.T, l *lab.Lab, host, script string) string {
	t.Helper()
	out, stderr, err := l.Exec(context.Background(), host, script)
	if err != nil {
		t.Fatalf("%s: %s: %v: %s", host, script, err, stderr)
	}
	return strings.TrimSpace(out)
}

func onHostErr(l *lab.Lab, host, script string) (string, error) {
	out, stderr, err := l.Exec(context.Background(), host, script)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w: %s", host, script, err, stderr)
	}
	return strings.TrimSpace(out), nil
}

func replaceSudoPassword(config, from, to string) string {
	return strings.Replace(config, fmt.Sprintf("sudo_password    = %q", from), fmt.Sprintf("sudo_password    = %q", to), 1)
}

// withHostKeys is a provider block whose known_hosts file holds the lab's real keys of the
// hosts in keep only, plus the pinned lines: a host left out and pinned wrongly must be refused.
func withHostKeys(t *testing.T, l *lab.Lab, keep []string, pinned ...string) string {
	t.Helper()
	content, err := os.ReadFile(l.KnownHostsPath)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(content), "\n") {
		hosts, _, _ := strings.Cut(line, " ")
		for _, h := range keep {
			if slices.Contains(strings.Split(hosts, ","), h) {
				kept = append(kept, line)
			}
		}
	}
	file := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(file, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var nodes strings.Builder
	for _, h := range l.Hosts {
		fmt.Fprintf(&nodes, "  node {\n    name    = %q\n    address = %q\n  }\n", h.Name, h.Address)
	}
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  sudo_password    = %q
  login_node       = "login01"
  known_hosts_file = %q
  host_keys        = %s
%s}
`, l.AdminUser, l.AdminKeyPath, l.AdminPassword, file, hclList(pinned), nodes.String())
}

// realHostKey is one of the host's own keys ("type base64") from the lab's known_hosts.
func realHostKey(t *testing.T, l *lab.Lab, host string) string {
	t.Helper()
	content, err := os.ReadFile(l.KnownHostsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(content), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 3 && slices.Contains(strings.Split(fields[0], ","), host) {
			return fields[1] + " " + fields[2]
		}
	}
	t.Fatalf("no key for %s in %s", host, l.KnownHostsPath)
	return ""
}
