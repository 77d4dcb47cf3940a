package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

func userBlock(attrs string) string {
	return `
resource "gpucluster_user" "test" {
  nodes = ["login01", "gpu01"]
` + attrs + `
}
`
}

func groupBlock(attrs string) string {
	return `
resource "gpucluster_group" "test" {
  nodes = ["login01", "gpu01"]
` + attrs + `
}
`
}

// Issue #11: the provider's own SSH account, administrator groups and system directories as
// homes are refused at plan, naming the attribute, before any node is asked.
func TestAccountsRefusedAtPlan(t *testing.T) {
	cases := map[string]struct {
		config string
		want   *regexp.Regexp
	}{
		"the provider's own account": {offlineProvider + userBlock(`  name = "admin"
  uid   = 1000
  group = "users"`), diagPattern("Account Is The Provider's Own", `name = "admin"`,
			`gpucluster_user "admin" names the account the provider connects as`, "taking it out of sudo locks the provider")},
		"a node block's account": {offlineProvider + userBlock(`  name = "ops"
  uid   = 1005
  group = "users"`), diagPattern("Account Is The Provider's Own", `name = "ops"`, `gpucluster_user "ops" names the account`)},
		"the own account's group, even when allowed": {offlineProvider + groupBlock(`  name              = "admin"
  gid               = 1000
  allow_admin_group = true`), diagPattern("Account Is The Provider's Own", `name              = "admin"`,
			`gpucluster_group "admin" names the group of the account the provider connects as`)},
		"sudo in groups": {offlineProvider + userBlock(`  name   = "dave"
  uid    = 1010
  group  = "users"
  groups = ["video", "sudo"]`), diagPattern("Administrator Group Not Allowed", `groups = ["video", "sudo"]`,
			"groups lists sudo, an administrator group", "Remove sudo, or set allow_admin_groups = true")},
		"wheel as primary group": {offlineProvider + userBlock(`  name  = "dave"
  uid   = 1010
  group = "wheel"`), diagPattern("Administrator Group Not Allowed", `group = "wheel"`, "group is wheel, an administrator group")},
		"the sudo group": {offlineProvider + groupBlock(`  name             = "sudo"
  gid              = 27
  allow_system_gid = true`), diagPattern("Administrator Group Not Allowed", `name             = "sudo"`,
			"name is sudo, an administrator group", "set allow_admin_groups = true")},
		"home /etc": {offlineProvider + userBlock(`  name  = "dave"
  uid   = 1010
  group = "users"
  home  = "/etc"`), diagPattern("Invalid Home Directory", `home  = "/etc"`, `home directory "/etc" is a top-level directory`)},
		"home under /usr": {offlineProvider + userBlock(`  name  = "dave"
  uid   = 1010
  group = "users"
  home  = "/usr/local/dave"`), diagPattern("Invalid Home Directory", `home  = "/usr/local/dave"`, "is inside /usr, which belongs to the operating system")},
		"home in /var outside /var/lib": {offlineProvider + userBlock(`  name  = "dave"
  uid   = 1010
  group = "users"
  home  = "/var/spool/dave"`), diagPattern("Invalid Home Directory", `home  = "/var/spool/dave"`, "is inside /var,")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: tc.config, PlanOnly: true, ExpectError: tc.want}},
			})
		})
	}
}

// The opt-ins work: an administrator account and a service account's home under /var/lib plan
// once they are explicitly allowed.
func TestAccountsOptInsPlan(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: unknownConnectionProvider + userBlock(`  name               = "opsadmin"
  uid                = 1020
  group              = "users"
  groups             = ["sudo", "adm"]
  allow_admin_groups = true`) + groupBlock(`  name              = "wheel"
  gid               = 1021
  allow_admin_group = true`) + `
resource "gpucluster_user" "svc" {
  name             = "svc"
  uid              = 990
  group            = "users"
  home             = "/var/lib/svc"
  allow_system_uid = true
  nodes            = ["login01"]
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

func labAdminOnNode() users.State {
	return users.State{
		Users: map[string]users.UserState{"admin": {Exists: true, UID: 1000, GID: 1000, PrimaryGroupName: "admin",
			Groups: []string{"sudo"}, Shell: "/bin/bash", Home: "/home/admin"}},
		Groups: map[string]users.GroupState{"users": {Exists: true, GID: 100}},
	}
}

// Taking over an existing administrator is refused on the node where it is one, naming the
// opt-in; with the opt-in the plan warns, per node, that it leaves sudo.
func TestTakeOverOfAdministrator(t *testing.T) {
	p := accountPlan{kind: users.KindUser, name: "admin", id: 1000, newNodes: []string{"gpu01"}, primary: "users", shell: "/bin/bash", home: "/home/admin"}
	diags := p.problems("gpu01", labAdminOnNode(), users.IDOwners{UIDs: map[int64]string{1000: "admin"}})
	if !hasDiag(diags, diag.SeverityError, "Existing Account Is An Administrator", "User admin already exists there and is in admin, sudo", "allow_admin_groups = true", "node gpu01") {
		t.Errorf("problems() = %v, want the administrator refused on gpu01", diags)
	}
	if diags := p.problems("gpu02", labAdminOnNode(), users.IDOwners{}); diags.HasError() {
		t.Errorf("on a node the plan does not newly cover: %v, want nothing refused", diags)
	}
	p.allowAdmin = true
	if diags := p.problems("gpu01", labAdminOnNode(), users.IDOwners{}); diags.HasError() {
		t.Errorf("with allow_admin_groups: %v, want no error", diags)
	}
	w := takeOverWarning(p, map[string][]string{"gpu01": p.takeOverChanges("gpu01", labAdminOnNode())})
	if w == nil || w.Severity() != diag.SeverityWarning || w.Summary() != "Existing Account Will Change On gpu01" ||
		!strings.Contains(w.Detail(), "- gpu01: leaves groups sudo; primary group admin becomes users") {
		t.Errorf("takeOverWarning() = %v, want gpu01's lost sudo membership and primary group named", w)
	}
}

// An account that already has the configured uid and groups is taken over without a word.
func TestTakeOverOfMatchingAccountIsQuiet(t *testing.T) {
	p := accountPlan{kind: users.KindUser, name: "admin", id: 1000, newNodes: []string{"gpu01"}, primary: "admin", groups: []string{"sudo"},
		shell: "/bin/bash", home: "/home/admin", allowAdmin: true}
	if c := p.takeOverChanges("gpu01", labAdminOnNode()); c != nil {
		t.Errorf("takeOverChanges() = %q, want none", c)
	}
	if w := takeOverWarning(p, map[string][]string{}); w != nil {
		t.Errorf("takeOverWarning(no changes) = %v, want none", w)
	}
}

// The advice for an account that exists under another ID never suggests an ID the resource
// itself refuses, such as root's 0.
func TestOtherIDAdvice(t *testing.T) {
	root := accountPlan{kind: users.KindUser, name: "root", id: 1005, newNodes: []string{"gpu01"}}
	st := users.State{Users: map[string]users.UserState{"root": {Exists: true, UID: 0, PrimaryGroupName: "root"}}}
	diags := root.problems("gpu01", st, users.IDOwners{})
	if !hasDiag(diags, diag.SeverityError, "Account Exists With Another ID", "root is the operating system's own user", "Choose another name") ||
		strings.Contains(diags[0].Detail(), "Set uid = 0") {
		t.Errorf("problems(root) = %v, want advice to choose another name and never uid = 0", diags)
	}
	daemon := accountPlan{kind: users.KindUser, name: "daemon", id: 1005, newNodes: []string{"gpu01"}}
	if advice := daemon.otherIDAdvice(1); !strings.Contains(advice, "uid 1 is in the system range") {
		t.Errorf("otherIDAdvice(1) without allow_system_uid = %q, want the refusal explained", advice)
	}
	daemon.allowSystemID = true
	if advice := daemon.otherIDAdvice(1); advice != "Set uid = 1, or renumber the account by hand first; the provider never renumbers an account it did not create." {
		t.Errorf("otherIDAdvice(1) with allow_system_uid = %q", advice)
	}
}

// A connection that ends during the lookup is not blamed on getent; a node that answered wrongly is.
func TestLookupFailureDiags(t *testing.T) {
	dropped := fmt.Errorf("read accounts: %w", fmt.Errorf("command on gpu01 did not complete: %w", errors.New("the root shell ended")))
	answered := fmt.Errorf("read accounts: %w", &transport.ExitError{Host: "gpu02", Status: 1, Stderr: "getent: broken"})
	garbled := &users.AnswerError{Err: errors.New("read accounts: getent passwd failed (status 2)")}
	diags := lookupFailureDiags([]nodeFailure{{node: "gpu01", err: dropped}, {node: "gpu02", err: answered}, {node: "gpu03", err: garbled}},
		"Cannot Check Accounts", "Looking up user dave and its IDs failed")
	if len(diags) != 3 {
		t.Fatalf("got %d diagnostics, want 3: %v", len(diags), diags)
	}
	if d := diags[0]; d.Summary() != "Node Did Not Answer" || !strings.Contains(d.Detail(), "the connection ended or the command timed out") ||
		strings.Contains(d.Detail(), "getent passwd and getent group work") {
		t.Errorf("dropped connection: %s: %s", d.Summary(), d.Detail())
	}
	for _, d := range diags[1:] {
		if d.Summary() != "Cannot Check Accounts" || !strings.Contains(d.Detail(), "getent passwd and getent group work") {
			t.Errorf("answer from the node: %s: %s", d.Summary(), d.Detail())
		}
	}
}

func hasDiag(diags diag.Diagnostics, sev diag.Severity, summary string, details ...string) bool {
	for _, d := range diags {
		if d.Severity() != sev || d.Summary() != summary {
			continue
		}
		all := true
		for _, want := range details {
			all = all && strings.Contains(d.Detail(), want)
		}
		if all {
			return true
		}
	}
	return false
}

// A state that already manages the provider's own account (made before this check existed) is
// never destroyed on the nodes where the resource created it: the error comes before any host.
func TestDestroyOfOwnAccountRefused(t *testing.T) {
	c := &cluster{settings: settings{user: "admin"}}
	for _, kind := range []users.Kind{users.KindUser, users.KindGroup} {
		diags := c.removeAccount(context.Background(), []string{"gpu01", "gpu02"}, kind, "admin", 1000, users.RemoveUser, "")
		if !hasDiag(diags, diag.SeverityError, "Account Is The Provider's Own", "would delete it on gpu01, gpu02", "terraform state rm") {
			t.Errorf("removeAccount(%s admin) = %v, want the destroy refused", kind, diags)
		}
	}
	// Adopted everywhere, nothing would be removed, so there is nothing to refuse; retiring the ID
	// needs the login node, which this cluster has not got.
	diags := c.removeAccount(context.Background(), nil, users.KindUser, "admin", 1000, users.RemoveUser, "")
	if hasDiag(diags, diag.SeverityError, "Account Is The Provider's Own") || !hasDiag(diags, diag.SeverityError, "Missing Login Node") {
		t.Errorf("removeAccount(admin, adopted everywhere) = %v, want only the ledger step to run", diags)
	}
}
