package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"gpucluster": providerserver.NewProtocol6WithError(New("test")()),
}

// labNodeBlocks are the provider's node blocks for every lab host.
func labNodeBlocks(l *lab.Lab) string {
	var nodes strings.Builder
	for _, h := range l.Hosts {
		fmt.Fprintf(&nodes, "  node {\n    name    = %q\n    address = %q\n  }\n", h.Name, h.Address)
	}
	return nodes.String()
}

// providerConfig points the provider at the lab the way an admin points it at a cluster:
// key file, known_hosts, sudo password, login01 as jump host. extra is added inside the block.
func providerConfig(l *lab.Lab, extra string) string {
	return labProvider(l, labNodeBlocks(l)+extra)
}

// labProvider is providerConfig with the given node blocks and settings in place of the lab's
// node blocks.
func labProvider(l *lab.Lab, body string) string {
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  known_hosts_file = %q
  sudo_password    = %q
  login_node       = "login01"
%s
}
`, l.AdminUser, l.AdminKeyPath, l.KnownHostsPath, l.AdminPassword, body)
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
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  sudo_password    = %q
  login_node       = "login01"
  known_hosts_file = %q
  host_keys        = %s
%s}
`, l.AdminUser, l.AdminKeyPath, l.AdminPassword, file, hclList(pinned), labNodeBlocks(l))
}

// labHostKey is one of the host's own keys ("type base64") from the lab's known_hosts: of
// keyType ("ssh-ed25519", the key an unknown host is asked for first), or of any type when
// keyType is "".
func labHostKey(t *testing.T, l *lab.Lab, host, keyType string) string {
	t.Helper()
	content, err := os.ReadFile(l.KnownHostsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(content), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 3 && (keyType == "" || fields[1] == keyType) && slices.Contains(strings.Split(fields[0], ","), host) {
			return fields[1] + " " + fields[2]
		}
	}
	t.Fatalf("no %s key for %s in %s", keyType, host, l.KnownHostsPath)
	return ""
}

// offlineProvider is a provider whose connection settings are all known but whose nodes sit in
// TEST-NET-1, where nothing answers: a refusal that must come before any host is asked shows as
// itself, and one that needed a host would show as a connection error instead.
const offlineProvider = `
provider "gpucluster" {
  login_node      = "login01"
  connect_timeout = "2s"
  node {
    name    = "login01"
    address = "192.0.2.10"
  }
  node {
    name    = "gpu01"
    address = "192.0.2.11"
    user    = "ops"
  }
}
`

// unknownConnectionProvider's user is known only at apply, so plan-time host checks wait and a
// configuration the provider accepts plans cleanly without a lab.
const unknownConnectionProvider = `
resource "terraform_data" "user" {
  input = "admin"
}

provider "gpucluster" {
  user       = terraform_data.user.output
  login_node = "login01"
}
`

// diagPattern matches Terraform's rendering of an error: its summary, the configuration line it
// names (so the attribute is the one the error is about), then phrases of its detail, which
// Terraform wraps at any space.
func diagPattern(summary, configLine string, details ...string) *regexp.Regexp {
	parts := []string{regexp.QuoteMeta("Error: " + summary), regexp.QuoteMeta(configLine)}
	for _, d := range details {
		parts = append(parts, strings.Join(strings.Fields(regexp.QuoteMeta(d)), `\s+`))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// block is a resource block named x of type typ with one argument per line.
func block(typ string, args ...string) string {
	return fmt.Sprintf("resource %q \"x\" {\n  %s\n}\n", typ, strings.Join(args, "\n  "))
}

// checkOnHost runs a script through the lab's own seam and compares its output.
func checkOnHost(l *lab.Lab, node, script, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, node, script)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s: %s printed %q, want %q", node, script, got, want)
		}
		return nil
	}
}

// checkOnHosts is checkOnHost on each node.
func checkOnHosts(l *lab.Lab, nodes []string, script, want string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, n := range nodes {
			if err := checkOnHost(l, n, script, want)(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// expectPrior checks an attribute of the refreshed prior state a plan starts from, which is
// where a hand-made change shows up; the built-in checks only look at planned values.
func expectPrior(address, attr string, check func(value any) error) plancheck.PlanCheck {
	return priorCheck{address: address, attr: attr, check: check}
}

// expectBefore checks one entry of a map attribute of the prior state.
func expectBefore(address, attr, key, want string) plancheck.PlanCheck {
	return expectPrior(address, attr, func(v any) error {
		entries, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("prior state has no map %s", attr)
		}
		if got := entries[key]; got != want {
			return fmt.Errorf("prior %s[%q] = %v, want %q", attr, key, got, want)
		}
		return nil
	})
}

// expectBeforeValue checks a top-level attribute of the prior state: what Read found on the
// host, before the plan proposes to change it.
func expectBeforeValue(address, attr string, want any) plancheck.PlanCheck {
	return expectPrior(address, attr, func(v any) error {
		if v != want {
			return fmt.Errorf("prior %s = %v, want %v", attr, v, want)
		}
		return nil
	})
}

type priorCheck struct {
	address, attr string
	check         func(value any) error
}

func (c priorCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		before, ok := rc.Change.Before.(map[string]any)
		if !ok {
			resp.Error = fmt.Errorf("%s: no prior state in the plan", c.address)
			return
		}
		if err := c.check(before[c.attr]); err != nil {
			resp.Error = fmt.Errorf("%s: %w", c.address, err)
		}
		return
	}
	resp.Error = fmt.Errorf("%s: not in the plan", c.address)
}
