package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// hostFingerprint is what a refused plan must leave as it was on a host: the account databases
// by sha256, admin's identity and home, the provider's ledgers and ownership records, and every
// file under /etc and /home with its owner, mode and content.
const hostFingerprint = `sha256sum /etc/passwd /etc/group /etc/shadow /etc/gshadow
id admin
stat -c '%u:%g %a %n' /home/admin
find /var/lib/gpucluster -type f -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum
find /etc /home -xdev \( -type f -o -type d -o -type l \) -printf '%p %U:%G %m %s\n' | sort | sha256sum
find /etc /home -xdev -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum
`

func snapshotHosts(t *testing.T, l *lab.Lab) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range labNodeNames(l) {
		out[n] = onHost(t, l, n, hostFingerprint)
	}
	return out
}

func compareSnapshots(t *testing.T, before, after map[string]string) {
	t.Helper()
	for node, b := range before {
		if after[node] != b {
			t.Errorf("a refused plan changed %s:\nbefore:\n%s\nafter:\n%s", node, b, after[node])
		}
	}
}

// Issue #11: declaring the provider's own account planned as a harmless create, and the apply
// took admin out of sudo on every node. Now the plan is refused, whatever the opt-ins say, and
// so are an existing administrator, root under another uid (without the advice to set uid = 0),
// an administrator group, a system directory as home and a MaxTime Slurm cannot read. Nothing
// on any host changes: not admin's groups, not the account databases, not a file under /etc or
// /home, not the ledger.
func TestAccSafety_refusedPlansChangeNoHost(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	// An administrator made by hand on gpu01, as a site might have one besides admin.
	onHost(t, l, "gpu01", "useradd -M -u 1801 -g users -G sudo tacc_op")
	t.Cleanup(func() { _, _, _ = l.Exec(context.Background(), "gpu01", "userdel tacc_op") })
	if got := onHost(t, l, "gpu01", "id -nG admin"); !strings.Contains(" "+got+" ", " sudo ") {
		t.Fatalf("the lab's admin is not in sudo on gpu01 (%q): the test would prove nothing", got)
	}
	before := snapshotHosts(t, l)

	user := func(name string, uid int, attrs string) string {
		return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = %s
%s
}
`, name, uid, hclList(nodes), attrs)
	}
	steps := []resource.TestStep{
		{Config: user("admin", 1000, ""), ExpectError: diagPattern("Account Is The Provider's Own", `name  = "admin"`,
			`gpucluster_user "admin" names the account the provider connects as`)},
		{Config: user("admin", 1000, `  groups             = ["sudo"]
  allow_admin_groups = true`), ExpectError: diagPattern("Account Is The Provider's Own", `name  = "admin"`)},
		{Config: providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_group" "test" {
  name              = "admin"
  gid               = 1000
  nodes             = %s
  allow_admin_group = true
}
`, hclList(nodes)), ExpectError: diagPattern("Account Is The Provider's Own", `name              = "admin"`)},
		{Config: user("tacc_op", 1801, ""), ExpectError: diagPattern("Existing Account Is An Administrator", `resource "gpucluster_user" "test"`,
			"User tacc_op already exists there and is in sudo, an administrator group on node gpu01", "allow_admin_groups = true")},
		{Config: user("root", 1803, ""), ExpectError: diagPattern("Account Exists With Another ID", "uid   = 1803",
			"user root already exists there with uid 0", "root is the operating system's own user", "Choose another name")},
		{Config: user("tacc_dave", 1802, `  groups = ["sudo"]`), ExpectError: diagPattern("Administrator Group Not Allowed", `groups = ["sudo"]`)},
		{Config: user("tacc_dave", 1802, `  home = "/etc"`), ExpectError: diagPattern("Invalid Home Directory", `home = "/etc"`, "top-level directory")},
		{Config: providerConfig(l, "") + `
resource "gpucluster_slurm_partition" "gpu" {
  controller = "login01"
  name       = "gpu"
  nodes      = ["gpu01"]
  max_time   = "forever"
}
`, ExpectError: diagPattern("Invalid Value", `max_time   = "forever"`, "MaxTime=forever: not a time")},
	}
	for i := range steps {
		steps[i].PlanOnly = true
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})

	compareSnapshots(t, before, snapshotHosts(t, l))
	for _, n := range nodes {
		if got := onHost(t, l, n, "id -nG admin"); !strings.Contains(" "+got+" ", " sudo ") {
			t.Errorf("admin left sudo on %s: id -nG admin = %q", n, got)
		}
	}
}

// With allow_admin_groups, an administrator made by hand on gpu01 is taken over there and
// created on the other nodes; listing sudo keeps it in sudo on gpu01 and puts it there
// elsewhere, and destroy leaves gpu01's account as it is.
func TestAccUser_takesOverAdministratorWithOptIn(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	const name, uid = "tacc_op2", 1811
	onHost(t, l, "gpu01", fmt.Sprintf("useradd -M -u %d -g users -G sudo %s", uid, name))
	t.Cleanup(func() { _, _, _ = l.Exec(context.Background(), "gpu01", "userdel "+name) })
	config := providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name               = %q
  uid                = %d
  group              = "users"
  groups             = ["sudo"]
  allow_admin_groups = true
  nodes              = %s
}
`, name, uid, hclList(nodes))
	inSudo := func(s *terraform.State) error {
		for _, n := range nodes {
			got, err := onHostErr(l, n, "id -nG "+name)
			if err != nil {
				return err
			}
			if got != "users sudo" {
				return fmt.Errorf("%s: id -nG %s = %q, want \"users sudo\"", n, name, got)
			}
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			got, err := onHostErr(l, "gpu01", "id -nG "+name)
			if err != nil {
				return fmt.Errorf("destroy removed the account gpu01 had before: %w", err)
			}
			if got != "users sudo" {
				return fmt.Errorf("destroy changed the account gpu01 had before: id -nG = %q, want \"users sudo\"", got)
			}
			others := []string{}
			for _, n := range nodes {
				if n != "gpu01" {
					others = append(others, n)
				}
			}
			return checkUserGone(l, name, others, "")(s)
		},
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("adopted_on"),
					knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("gpu01")})),
			},
			Check: inSudo,
		}},
	})
}
