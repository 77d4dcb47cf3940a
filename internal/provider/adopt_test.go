package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

// adoptTable is the nodes with the guide's firewall table and inventory groups, in the same HCL
// examples/cluster uses, so the configuration is what an adopting admin would write.
func adoptTable(nodes []string) string {
	return `
locals {
  nodes = ` + hclList(nodes) + `
  firewall_groups = {
    controller     = ["login01"]
    compute        = [for n in local.nodes : n if n != "login01"]
    beegfs_storage = [for n in local.nodes : n if n != "login01"]
    all            = local.nodes
  }
  firewall_table = ` + guideFirewallRows("10.0.0.0/24") + `
  firewall_rules = merge([
    for row in local.firewall_table : {
      for node in local.firewall_groups[row.group] :
      "${node} ${row.port}/${row.proto}" => merge(row, { node = node })
    }
  ]...)
}
`
}

// adoptResources declares what tools/lab-build-by-hand.sh built, as the import reads it back:
// useradd's shell is /bin/sh, roles follow the enabled daemons (BeeGFS too), the firewall lists every
// rule of its node and names the controller slurmd takes its configuration from. The Slurm
// daemons themselves are not imported yet (issue #10's next part).
const adoptResources = `
resource "gpucluster_node" "all" {
  for_each         = toset(local.nodes)
  name             = each.key
  roles            = each.key == "login01" ? ["controller"] : ["compute", "storage"]
  ssh_allow_groups = each.key == "login01" ? null : ["sudo"]
}

resource "gpucluster_group" "users" {
  name             = "users"
  gid              = 100
  allow_system_gid = true
  nodes            = local.nodes
}

resource "gpucluster_user" "guide" {
  for_each = { alice = 1001, bob = 1002 }
  name     = each.key
  uid      = each.value
  group    = gpucluster_group.users.id
  shell    = "/bin/sh"
  nodes    = local.nodes
}

resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = local.nodes
}

resource "gpucluster_firewall_rule" "table" {
  for_each = local.firewall_rules
  node     = each.value.node
  port     = each.value.port
  proto    = each.value.proto
  from     = each.value.src
  comment  = each.value.comment
}

resource "gpucluster_firewall" "node" {
  for_each         = toset(local.nodes)
  node             = each.key
  rules            = [for r in gpucluster_firewall_rule.table : r.id if r.node == each.key]
  slurm_controller = "login01"
}
`

// adoptImports are the import blocks an admin writes for the whole hand-built cluster.
var adoptImports = importEach("toset(local.nodes)", "gpucluster_node.all", "each.key") +
	importBlock("gpucluster_group.users", `"users@${join(",", local.nodes)}"`) +
	importEach(`toset(["alice", "bob"])`, "gpucluster_user.guide", `"${each.key}@${join(",", local.nodes)}"`) +
	importBlock("gpucluster_munge_key.cluster", `"login01@${join(",", local.nodes)}"`) +
	importEach("local.firewall_rules", "gpucluster_firewall_rule.table",
		`"${each.value.node}:allow:${each.value.port}/${each.value.proto}:from=${each.value.src}"`) +
	importEach("toset(local.nodes)", "gpucluster_firewall.node", "each.key")

// adoptRelease hands the cluster back: the state forgets it, the hosts keep everything.
var adoptRelease = released("gpucluster_node.all", "gpucluster_group.users", "gpucluster_user.guide",
	"gpucluster_munge_key.cluster", "gpucluster_firewall_rule.table", "gpucluster_firewall.node")

// handedOver is the second half of handing objects to another state (the ownership guide): once
// the state forgot them, their ownership records are deleted on every node, so that the next
// adoption test may import them.
func handedOver(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, node := range labNodeNames(l) {
			if _, err := onHostErr(l, node, "rm -rf "+ownership.Dir); err != nil {
				return err
			}
		}
		return nil
	}
}

// released is a removed block for each address, with destroy = false: the state forgets the
// resource and its hosts keep everything.
func released(addresses ...string) string {
	var b strings.Builder
	for _, a := range addresses {
		fmt.Fprintf(&b, "\nremoved {\n  from = %s\n  lifecycle { destroy = false }\n}\n", a)
	}
	return b.String()
}

// planChange is one resource's change in a plan, as terraform show -json gives it.
type planChange struct {
	address, resourceType string
	actions               []string
	before, after         any
}

// recordingTypes are the resources whose import leaves a ledger line or marker to the apply:
// the firewall rules' in each node's ownership ledger, the users' and groups' in the UID ledger
// on login01, and each firewall's marker on its node.
var recordingTypes = []string{"gpucluster_firewall", "gpucluster_firewall_rule", "gpucluster_group", "gpucluster_user"}

// recordsLedgersOnly is the plan of importing a cluster built by hand: import only reads, so the
// one change is the ledger line of each firewall rule, user and group and each firewall's
// marker, which the apply records (recorded false -> true), and every other resource is a no-op
// (a firewall too, where the marker is already on its node).
func recordsLedgersOnly(changes []planChange) error {
	var errs []error
	seen := map[string]bool{}
	for _, c := range changes {
		if !slices.Contains(recordingTypes, c.resourceType) {
			if got := strings.Join(c.actions, ","); got != "no-op" {
				errs = append(errs, fmt.Errorf("%s: actions %s, want no-op", c.address, got))
			}
			continue
		}
		seen[c.resourceType] = true
		if c.resourceType == "gpucluster_firewall" && markerStayed(c) {
			continue
		}
		if err := recordedOnly(c); err != nil {
			errs = append(errs, err)
		}
	}
	for _, typ := range recordingTypes {
		if !seen[typ] {
			errs = append(errs, fmt.Errorf("no %s in the plan", typ))
		}
	}
	return errors.Join(errs...)
}

// markerStayed tells a firewall whose node still holds the marker: a state that released the
// firewall (removed without destroy) left it there, and the import reads it.
func markerStayed(c planChange) bool {
	before, _ := c.before.(map[string]any)
	after, _ := c.after.(map[string]any)
	return strings.Join(c.actions, ",") == "no-op" && before["recorded"] == true && after["recorded"] == true
}

// recordedOnly wants c to be an update of recorded from false to true and of nothing else.
func recordedOnly(c planChange) error {
	got := strings.Join(c.actions, ",")
	before, _ := c.before.(map[string]any)
	after, _ := c.after.(map[string]any)
	if got != "update" || before["recorded"] != false || after["recorded"] != true {
		return fmt.Errorf("%s: actions %s, recorded %v -> %v; want an update of recorded from false to true", c.address, got, before["recorded"], after["recorded"])
	}
	before, after = maps.Clone(before), maps.Clone(after)
	delete(before, "recorded")
	delete(after, "recorded")
	if !reflect.DeepEqual(before, after) {
		return fmt.Errorf("%s: changes more than recorded: %v -> %v", c.address, before, after)
	}
	return nil
}

// planChanges are a plan's resource changes as recordsLedgersOnly and recordedOnly take them.
func planChanges(req plancheck.CheckPlanRequest) map[string]planChange {
	changes := map[string]planChange{}
	for _, rc := range req.Plan.ResourceChanges {
		c := planChange{address: rc.Address, resourceType: rc.Type, before: rc.Change.Before, after: rc.Change.After}
		for _, a := range rc.Change.Actions {
			c.actions = append(c.actions, string(a))
		}
		changes[rc.Address] = c
	}
	return changes
}

// importRecordsLedgersOnly is recordsLedgersOnly as a plan check.
type importRecordsLedgersOnly struct{}

func (importRecordsLedgersOnly) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = recordsLedgersOnly(slices.Collect(maps.Values(planChanges(req))))
}

// expectRecordedOnly is recordedOnly as a plan check of the resources at addresses.
type expectRecordedOnly []string

func (addresses expectRecordedOnly) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	changes := planChanges(req)
	var errs []error
	for _, a := range addresses {
		c, ok := changes[a]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not in the plan", a))
			continue
		}
		errs = append(errs, recordedOnly(c))
	}
	resp.Error = errors.Join(errs...)
}

// importBlock is an import block for the resource at address to; id is an HCL expression.
func importBlock(to, id string) string {
	return fmt.Sprintf("\nimport {\n  to = %s\n  id = %s\n}\n", to, id)
}

// importEach is an import block for each element of forEach, an HCL collection: to is the
// resource's address without the key, id an HCL expression of each.
func importEach(forEach, to, id string) string {
	return fmt.Sprintf("\nimport {\n  for_each = %s\n  to       = %s[each.key]\n  id       = %s\n}\n", forEach, to, id)
}

// The first part: a cluster built by the guide's own commands imports whole with a
// plan that changes nothing but the ledger lines of the firewall rules, users and groups, and neither the import nor the apply after it changes a file under /etc or
// restarts a daemon on any host. The state then lets go of it, and the hosts keep it all.
func TestAccAdopt_handBuiltCluster(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	buildByHand(t, l)
	config := providerConfig(l, "") + adoptTable(nodes) + adoptResources
	var found, imported string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return sameSnapshot("releasing the cluster from the state", found, hostSnapshot(t, l, false))
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() { found = hostSnapshot(t, l, false) },
				Config:    config + adoptImports,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					// Imports that change nothing on a host: every resource is read back as configured.
					PreApply: []plancheck.PlanCheck{importRecordsLedgersOnly{}},
				},
				ConfigStateChecks: append(undeclaredChecks(nodes, ""), hostCheck(func() error {
					imported = hostSnapshot(t, l, true)
					return sameSnapshot("the import", found, hostSnapshot(t, l, false))
				})),
			},
			{
				// The first apply after the import, the import blocks gone.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{hostCheck(func() error {
					return sameSnapshot("the apply after the import", imported, hostSnapshot(t, l, true))
				})},
			},
			{
				// A port opened by hand on an adopted node shows as undeclared.
				PreConfig: func() { onHost(t, l, "gpu01", "ufw allow 7777 comment 'by hand'") },
				Config:    config,
				ConfigStateChecks: append(undeclaredChecks(nodes, "gpu01"),
					statecheck.ExpectKnownValue(`gpucluster_firewall.node["gpu01"]`, tfjsonpath.New("undeclared_rules"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("gpu01:allow:7777/any:from=any")}))),
			},
			{
				// exclusive deletes it, and only it: the plan shows it going.
				Config: strings.Replace(config, `node             = each.key
  rules`, `node             = each.key
  exclusive        = each.key == "gpu01"
  rules`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(`gpucluster_firewall.node["gpu01"]`, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(`gpucluster_firewall.node["gpu02"]`, plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(`gpucluster_firewall.node["gpu01"]`, tfjsonpath.New("undeclared_rules"), knownvalue.SetExact(nil)),
					},
				},
				ConfigStateChecks: append(undeclaredChecks(nodes, ""), hostCheck(func() error {
					out, err := onHostErr(l, "gpu01", "ufw show added")
					if err != nil {
						return err
					}
					if strings.Contains(out, "7777") || strings.Count(out, "ufw allow") != 5 {
						return fmt.Errorf("exclusive must delete 7777 and keep gpu01's five declared rules:\n%s", out)
					}
					return nil
				})),
			},
			{
				PreConfig: func() { found = hostSnapshot(t, l, false) },
				Config:    providerConfig(l, "") + adoptRelease,
				Check:     handedOver(l),
			},
		},
	})
}

// undeclaredChecks expects no undeclared rule on any node but except: every rule made by hand
// was imported as a gpucluster_firewall_rule.
func undeclaredChecks(nodes []string, except string) []statecheck.StateCheck {
	var checks []statecheck.StateCheck
	for _, n := range nodes {
		if n != except {
			checks = append(checks, statecheck.ExpectKnownValue(fmt.Sprintf("gpucluster_firewall.node[%q]", n),
				tfjsonpath.New("undeclared_rules"), knownvalue.SetExact(nil)))
		}
	}
	return checks
}

// hostCheck runs a check on the hosts after a step. ConfigStateChecks, unlike Check, take a
// state whose resources have for_each keys.
type hostCheck func() error

func (c hostCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c()
}

// buildByHand runs the lab fixture script and undoes what it built when the test ends.
func buildByHand(t *testing.T, l *lab.Lab) {
	t.Helper()
	t.Cleanup(func() { undoBuildByHand(t, l) })
	t.Cleanup(func() { undoBeegfsByHand(t, l) })
	cmd := exec.Command("tools/lab-build-by-hand.sh")
	cmd.Dir = "../.." // the script runs bin/gpucluster-lab, which finds this lab through GPUCLUSTER_LAB
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools/lab-build-by-hand.sh: %v\n%s", err, out)
	}
}

func undoBuildByHand(t *testing.T, l *lab.Lab) {
	for _, n := range labNodeNames(l) {
		_, stderr, err := l.Exec(context.Background(), n, `export DEBIAN_FRONTEND=noninteractive
apt-get purge -y -q slurmctld slurmd slurm-client >/dev/null; rm -rf /etc/slurm /etc/default/slurmd /var/spool/slurmctld /var/spool/slurmd
ufw --force reset >/dev/null; rm -f /etc/ufw/*.rules.[0-9]*
userdel alice; userdel bob
rm -rf /etc/ansible
apt-get purge -y -q munge >/dev/null
if [ -e /etc/ssh/sshd_config.d/90-allow-sudo.conf ]; then rm /etc/ssh/sshd_config.d/90-allow-sudo.conf; systemctl reload ssh; fi
for f in `+firewall.LedgerPath+` `+users.LedgerPath+`; do
	[ -e "$f" ] && sed -i -E '/^(allow:|(user|group) (alice|bob|users) )/d' "$f"
done
rm -rf `+ownership.Dir+`
true`)
		if err != nil {
			t.Errorf("undo the hand-built cluster on %s: %v: %s", n, err, stderr)
		}
	}
}

// hostSnapshot records, per host, every file under /etc (content and modification time) and
// when each daemon the cluster runs last started, plus the provider's ledgers when withState.
func hostSnapshot(t *testing.T, l *lab.Lab, withState bool) string {
	t.Helper()
	script := `find /etc -xdev -type f -printf '%p %T@\n' | sort
find /etc -xdev -type f -print0 | sort -z | xargs -0 sha256sum
for u in munge ssh ufw systemd-journald slurmctld slurmd; do systemctl show -p Id -p ExecMainStartTimestampMonotonic -p ActiveEnterTimestampMonotonic -p MainPID "$u.service"; done
ufw status verbose`
	if withState {
		script += "\nfind /var/lib/gpucluster -type f -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum"
	}
	var b strings.Builder
	for _, n := range labNodeNames(l) {
		fmt.Fprintf(&b, "== %s\n%s\n", n, onHost(t, l, n, script))
	}
	return b.String()
}

func sameSnapshot(what, before, after string) error {
	if before == after {
		return nil
	}
	was := map[string]bool{}
	for _, line := range strings.Split(before, "\n") {
		was[line] = true
	}
	var changed []string
	for _, line := range strings.Split(after, "\n") {
		if !was[line] {
			changed = append(changed, line)
		}
	}
	return fmt.Errorf("%s changed the hosts; lines now different:\n%s", what, strings.Join(changed, "\n"))
}

// exclusive never deletes the rule that keeps the provider connected: with the SSH rule made
// by hand and declared nowhere, the plan refuses and no rule goes.
func TestAccFirewall_exclusiveKeepsProviderConnected(t *testing.T) {
	l := lab.Require(t)
	const node = "gpu02"
	onHost(t, l, node, "ufw allow proto tcp from 10.0.0.10 to any port 22 >/dev/null && ufw allow 7778 >/dev/null && ufw --force enable >/dev/null")
	t.Cleanup(func() { onHost(t, l, node, "ufw --force reset >/dev/null; rm -f /etc/ufw/*.rules.[0-9]*") })
	before := onHost(t, l, node, "ufw show added")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(l, "") + fmt.Sprintf(`
import {
  to = gpucluster_firewall.test
  id = %[1]q
}

resource "gpucluster_firewall" "test" {
  node      = %[1]q
  exclusive = true
}
`, node),
			ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*deleting the undeclared rules allow:22/tcp:from=10\.0\.0\.10`),
		}, {
			// Listing a rule that nobody declares contradicts exclusive.
			Config: providerConfig(l, "") + fmt.Sprintf(`
import {
  to = gpucluster_firewall.test
  id = %[1]q
}

resource "gpucluster_firewall" "test" {
  node      = %[1]q
  rules     = ["%[1]s:allow:22/tcp:from=10.0.0.10", "%[1]s:allow:7778/any:from=any"]
  exclusive = true
}
`, node),
			ExpectError: regexp.MustCompile(`(?s)Listed Rule Not Declared.*gpu02:allow:22/tcp:from=10\.0\.0\.10 is listed`),
		}},
	})
	if after := onHost(t, l, node, "ufw show added"); after != before {
		t.Errorf("a refused exclusive plan changed the rules:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
