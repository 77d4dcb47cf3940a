package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// expectRefusedAtPlan plans each configuration with a provider whose connection settings are
// not known yet, so no host is ever asked: the refusal comes from the configuration alone, and
// the test needs no lab.
func expectRefusedAtPlan(t *testing.T, cases map[string]struct{ config, want string }) {
	t.Helper()
	eachRefused(t, cases, resource.TestStep{Config: unknownConnectionProvider, PlanOnly: true},
		func(t *testing.T, c resource.TestCase) { resource.UnitTest(t, c) })
}

func userBlockNamed(name string, uid int, nodes string) string {
	return fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name    = %q
  uid     = %d
  group   = "users"
  shell   = "/bin/bash"
  nodes   = %s
  home_on = "login01"
}
`, name, uid, nodes)
}

func TestUserRefusedAtPlan(t *testing.T) {
	const nodes = `["login01", "gpu01"]`
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"shell injection in name": {userBlockNamed("alice;rm -rf /", 1201, nodes), `(?s)name.*must be a POSIX user name`},
		"leading dash":            {userBlockNamed("-x", 1201, nodes), `(?s)name.*must be a POSIX user name`},
		"upper case":              {userBlockNamed("ALICE", 1201, nodes), `(?s)name.*must be a POSIX user name`},
		"uid 0":                   {userBlockNamed("tacc_bad", 0, nodes), `(?s)Invalid UID`},
		"system uid":              {userBlockNamed("tacc_bad", 999, nodes), `(?s)Invalid UID.*allow_system_uid`},
		"empty node list":         {userBlockNamed("tacc_bad", 1201, "[]"), `(?s)nodes.*at least 1`},
		"home escapes /home": {strings.Replace(userBlockNamed("tacc_bad", 1201, nodes), `home_on = "login01"`, `home = "/home/../root"`, 1),
			`(?s)Invalid Home Directory`},
		"shell is a directory":  {strings.Replace(userBlockNamed("tacc_bad", 1201, nodes), `"/bin/bash"`, `"/"`, 1), `(?s)Invalid Shell`},
		"home_on outside nodes": {userBlockNamed("tacc_bad", 1201, `["gpu01"]`), `(?s)Home Node Not In Nodes`},
	})
}

func TestGroupRefusedAtPlan(t *testing.T) {
	group := func(name string, gid int, nodes string) string {
		return fmt.Sprintf("resource \"gpucluster_group\" \"test\" {\n  name  = %q\n  gid   = %d\n  nodes = %s\n}\n", name, gid, nodes)
	}
	const nodes = `["login01", "gpu01"]`
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"gid 0":       {group("tacc_bad", 0, nodes), `Invalid GID`},
		"system gid":  {group("tacc_bad", 50, nodes), `(?s)Invalid GID.*allow_system_gid`},
		"bad name":    {group("Bad;Name", 2201, nodes), `(?s)name.*POSIX group name`},
		"empty nodes": {group("tacc_bad", 2201, "[]"), `(?s)nodes.*at least 1`},
	})
}

func TestMungeKeyRefusedAtPlan(t *testing.T) {
	key := func(controller, nodes string) string {
		return fmt.Sprintf("resource \"gpucluster_munge_key\" \"test\" {\n  controller = %q\n  nodes      = %s\n}\n", controller, nodes)
	}
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"empty nodes":             {key("login01", "[]"), `(?s)nodes.*at least 1`},
		"controller not in nodes": {key("login01", `["gpu01", "gpu02"]`), `(?s)Controller Not In Nodes.*"login01"`},
		"shell in a node name":    {key("login01", `["login01", "gpu01;reboot"]`), `(?s)nodes.*must be a node name or address`},
	})
}

func TestFirewallRuleRefusedAtPlan(t *testing.T) {
	rule := func(port, proto, from, comment string) string {
		return firewallRuleBlock("bad", "gpu01", port, proto, from, comment)
	}
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"port 0":          {rule("0", "tcp", "any", ""), `(?s)Invalid Firewall Rule.*port.*out of range`},
		"port above max":  {rule("65536", "tcp", "any", ""), `(?s)port.*out of range`},
		"reversed range":  {rule("61000:60001", "tcp", "any", ""), `(?s)port.*reversed`},
		"range proto any": {rule("60001:61000", "any", "any", ""), `(?s)proto.*UFW refuses a range`},
		"invalid IP":      {rule("22", "tcp", "10.0.0.300", ""), `(?s)from.*not an IP address`},
		"invalid CIDR":    {rule("22", "tcp", "10.0.0.0/40", ""), `(?s)from.*not an IP address`},
		"injection":       {rule("22", "tcp", "10.0.0.1;reboot", ""), `(?s)from.*not an IP address`},
		"quote":           {rule("22", "tcp", "any", "it's"), `(?s)comment.*quote`},
		"newline":         {rule("22", "tcp", "any", "a\nb"), `(?s)comment.*line break`},
		"non-ASCII":       {rule("22", "tcp", "any", "Zürich"), `(?s)comment.*printable ASCII`},
	})
}

func TestSlurmAccountingRefusedAtPlan(t *testing.T) {
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"password": {block("gpucluster_slurm_accounting", `controller = "login01"`, `database_password_wo = "has space 1234"`),
			`(?s)Invalid Database Password.*12 to 128 characters`},
		"enforce": {block("gpucluster_slurm_accounting", `controller = "login01"`, `database_password_wo = "abcdefghijkl1"`, `enforce = ["always"]`),
			`(?s)enforce.*value must be one of`},
		"mariadb root": {block("gpucluster_slurm_accounting", `controller = "login01"`, `database_password_wo = "abcdefghijkl1"`, `database_user = "root"`),
			`(?s)MariaDB Account Reserved.*database_user`},
		"mariadb mysql": {block("gpucluster_slurm_accounting", `controller = "login01"`, `database_password_wo = "abcdefghijkl1"`, `database_user = "mysql"`),
			`(?s)MariaDB Account Reserved.*database_user`},
		"description": {block("gpucluster_slurm_account", `controller = "login01"`, `name = "a"`, `description = "Upper"`), `(?s)description.*must be lower case`},
		"root":        {block("gpucluster_slurm_account", `controller = "login01"`, `name = "root"`), `(?s)name.*value must be none of`},
		"default": {block("gpucluster_slurm_user", `controller = "login01"`, `name = "alice"`, `accounts = ["a"]`, `default_account = "b"`),
			`(?s)Default Account Not In Accounts`},
		"tres": {block("gpucluster_slurm_qos", `controller = "login01"`, `name = "q"`, `max_tres_per_user = { "GPU!" = 1 }`), `(?s)max_tres_per_user.*TRES name`},
	})
}

func TestNodeRefusedAtPlan(t *testing.T) {
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"unknown role": {"resource \"gpucluster_node\" \"test\" {\n  name  = \"gpu02\"\n  roles = [\"bartender\"]\n}\n", `(?s)roles.*value must be one of`},
	})
}

// Two resources that declare one rule in the same configuration are refused by the plan-time
// registry, before either exists.
func TestFirewallRuleDuplicateRefusedAtPlan(t *testing.T) {
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"same rule twice": {firewallRuleBlock("one", "gpu02", "5605", "tcp", "10.0.0.10", "one") +
			firewallRuleBlock("two", "gpu02", "5605", "tcp", "10.0.0.10/32", "two"),
			`(?s)Duplicate Firewall Rule.*allow:5605/tcp:from=10.0.0.10`},
	})
}

// The import ID is parsed before any node is asked; the nodes of offlineProvider would not answer.
func TestFirewallRuleImportIDFormatInError(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:        offlineProvider + firewallRuleBlock("test", "gpu01", "5604", "tcp", "any", ""),
			ResourceName:  "gpucluster_firewall_rule.test",
			ImportState:   true,
			ImportStateId: "gpu01/5604",
			ExpectError:   regexp.MustCompile(`(?s)Invalid Import ID.*NODE:ACTION:PORT/PROTO:from=SOURCE`),
		}},
	})
}
