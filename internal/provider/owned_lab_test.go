package provider

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// sibling is a second working directory with the same provider build: another state, as a
// colleague's checkout of the same configuration would be.
func (tf *terraformCLI) sibling() *terraformCLI {
	return &terraformCLI{t: tf.t, bin: tf.bin, dir: tf.t.TempDir(), env: tf.env}
}

// status runs terraform and returns its exit status and output without judging them, for runs
// that race each other.
func (tf *terraformCLI) status(args ...string) (int, string) {
	cmd := tf.command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	case err != nil:
		return -1, err.Error()
	}
	return 0, out.String()
}

func ownedUserConfig(l *lab.Lab, name string, uid int, extra string) string {
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_user" "test" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = %s
%s}
`, name, uid, hclList(labNodeNames(l)), extra)
}

// The case: two working directories declare the same user and apply at once. Both plans
// pass (neither sees a record yet); at apply exactly one claims the record, the other changes
// nothing and names the winner. Afterwards the loser's plan and import are refused naming the
// owner, and only the owner's destroy removes the account.
func TestAccOwnership_twoWorkingDirectories(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_own"
	nodes := labNodeNames(l)
	a := newTerraformCLI(t)
	b := a.sibling()
	for _, tf := range []*terraformCLI{a, b} {
		tf.write("main.tf", cliRequiredProviders+ownedUserConfig(l, name, 1961, ""))
		tf.run(0, "plan", "-out", "tfplan")
	}
	t.Cleanup(func() {
		for _, tf := range []*terraformCLI{a, b} {
			tf.status("destroy", "-auto-approve")
		}
	})

	var wg sync.WaitGroup
	codes, outs := make([]int, 2), make([]string, 2)
	for i, tf := range []*terraformCLI{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i] = tf.status("apply", "tfplan")
		}()
	}
	wg.Wait()
	winner, loser := a, b
	switch {
	case codes[0] == 0 && codes[1] == 1:
	case codes[0] == 1 && codes[1] == 0:
		winner, loser = b, a
		outs[0], outs[1] = outs[1], outs[0]
	default:
		t.Fatalf("two applies of one user exited %d and %d, want one success and one refusal:\n%s\n----\n%s", codes[0], codes[1], outs[0], outs[1])
	}
	ownedBy := regexp.MustCompile(`(?s)Object Owned By Another Resource.*` + regexp.QuoteMeta(winner.dir))
	if !ownedBy.MatchString(oneSpaced(outs[1])) {
		t.Fatalf("the losing apply does not name the winner's working directory %s:\n%s", winner.dir, outs[1])
	}
	record := onHost(t, l, "login01", "cat "+ownership.Dir+"/user/"+name)
	if !strings.Contains(record, "workdir="+winner.dir) || !strings.Contains(record, "phase=created") {
		t.Fatalf("login01's record names another owner:\n%s", record)
	}
	for _, node := range nodes {
		if got := onHost(t, l, node, "getent passwd "+name+" | cut -d: -f3"); got != "1961" {
			t.Fatalf("%s: uid of %s is %q after the winning apply, want 1961", node, name, got)
		}
	}

	before := snapshotHosts(t, l)
	if code, out := loser.status("plan"); code != 1 || !ownedBy.MatchString(oneSpaced(out)) {
		t.Fatalf("the other directory's plan exited %d, want 1 naming the owner:\n%s", code, out)
	}
	// An import only reads: it warns, and every plan of the imported resource is refused.
	importedFromOwner := regexp.MustCompile(`(?s)Imported Object Has Another Owner.*` + regexp.QuoteMeta(winner.dir))
	if code, out := loser.status("import", "gpucluster_user.test", name+"@"+strings.Join(nodes, ",")); code != 0 || !importedFromOwner.MatchString(oneSpaced(out)) {
		t.Fatalf("the other directory's import exited %d, want 0 with a warning naming the owner:\n%s", code, out)
	}
	if code, out := loser.status("plan"); code != 1 || !ownedBy.MatchString(oneSpaced(out)) {
		t.Fatalf("the plan after that import exited %d, want 1 naming the owner:\n%s", code, out)
	}
	// A destroy there must not touch the owner's account: the resource is only dropped from state.
	if code, out := loser.status("apply", "-destroy", "-auto-approve", "-refresh=false"); code != 0 || !strings.Contains(oneSpaced(out), "Object Left To Its Owner") {
		t.Fatalf("the other directory's destroy exited %d, want 0 leaving the account to its owner:\n%s", code, out)
	}
	compareSnapshots(t, before, snapshotHosts(t, l))

	winner.run(0, "destroy", "-auto-approve")
	for _, node := range nodes {
		if got := onHost(t, l, node, "getent passwd "+name+" || true"); got != "" {
			t.Errorf("%s: %s still exists after its owner's destroy: %s", node, name, got)
		}
	}
	if got := onHost(t, l, "login01", "ls "+ownership.Dir+"/user/"); strings.Contains(got, name) {
		t.Errorf("the record of %s outlived its owner's destroy: %s", name, got)
	}
}

// oneSpaced undoes Terraform's wrapping of a diagnostic, so a path can be matched whole.
func oneSpaced(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "│", " ")), " ")
}

// A create that fails after it made the account on every node keeps its partial state, which
// Terraform taints: the next apply replaces the account (destroy, then create) instead of taking
// the accounts its own create made for someone else's (adopted_on stays empty), and destroy
// removes them. On the old code the failed create left no state and the retry adopted them.
func TestAccOwnership_failedCreateIsReplacedNotAdopted(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_cut"
	nodes := labNodeNames(l)
	blocker := "/home/tacc_blocker"
	// A run of this test that died half way leaves the accounts and the record behind.
	for _, node := range nodes {
		onHost(t, l, node, "userdel "+name+" 2>/dev/null; rm -f "+ownership.Dir+"/user/"+name)
	}
	onHost(t, l, "gpu01", "rm -rf "+blocker+" && touch "+blocker)
	t.Cleanup(func() { _, _ = onHostErr(l, "gpu01", "rm -f "+blocker) })
	config := ownedUserConfig(l, name, 1962, fmt.Sprintf("  home    = %q\n  home_on = \"gpu01\"\n", blocker+"/"+name))
	accountsMade := func() error { return uidEverywhere(l, nodes, name, "1962") }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return userAndRecordGone(l, nodes, name) },
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`Cannot Create Home Directory`),
			},
			{
				PreConfig: func() {
					if err := accountsMade(); err != nil {
						t.Fatalf("the failed create should have made the accounts: %v", err)
					}
					onHost(t, l, "gpu01", "rm -f "+blocker)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("adopted_on"), knownvalue.SetExact(nil)),
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("uid"), knownvalue.Int64Exact(1962)),
				},
				Check: func(*terraform.State) error {
					if err := accountsMade(); err != nil {
						return err
					}
					_, err := onHostErr(l, "gpu01", "test -d "+blocker+"/"+name)
					return err
				},
			},
		},
	})
}

// The case: the connection to one node is cut while a user is being created (here by
// useradd on gpu02 itself, which ends every SSH session of the provider's account there). The
// apply fails; the accounts made on the other nodes are the provider's own work: the next apply
// replaces the tainted user (adopted_on stays empty instead of naming the nodes the cut create
// reached), and destroy removes the accounts everywhere, the record with them.
func TestAccOwnership_connectionCutDuringCreate(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_conn"
	nodes := labNodeNames(l)
	for _, node := range nodes {
		onHost(t, l, node, "userdel "+name+" 2>/dev/null; rm -f "+ownership.Dir+"/user/"+name)
	}
	// dpkg-divert keeps the real useradd aside, as a package upgrade would respect.
	const cutter = `dpkg-divert --quiet --local --rename --add /usr/sbin/useradd
printf '#!/bin/sh\npkill -KILL -u %s\nexit 1\n' > /usr/sbin/useradd
chmod 0755 /usr/sbin/useradd`
	restore := func() error {
		_, err := onHostErr(l, "gpu02", `if dpkg-divert --list /usr/sbin/useradd | grep -q .; then
  rm -f /usr/sbin/useradd && dpkg-divert --quiet --local --rename --remove /usr/sbin/useradd
fi`)
		return err
	}
	onHost(t, l, "gpu02", fmt.Sprintf(cutter, l.AdminUser))
	t.Cleanup(func() { _ = restore() })
	config := ownedUserConfig(l, name, 1963, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return userAndRecordGone(l, nodes, name) },
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Connection\s+To\s+gpu02\s+Lost\s+While\s+Creating\s+tacc_conn`),
			},
			{
				PreConfig: func() {
					if got := onHost(t, l, "gpu01", "getent passwd "+name+" | cut -d: -f3"); got != "1963" {
						t.Fatalf("gpu01: the cut create should have made %s (uid 1963), found %q", name, got)
					}
					if got := onHost(t, l, "gpu02", "getent passwd "+name+" || true"); got != "" {
						t.Fatalf("gpu02: the cut create should not have made %s: %s", name, got)
					}
					if err := restore(); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("adopted_on"), knownvalue.SetExact(nil)),
				},
				Check: func(*terraform.State) error { return uidEverywhere(l, nodes, name, "1963") },
			},
		},
	})
}

// The connection cut in the middle of another kind's create: gpucluster_firewall_rule, whose
// owner is the node's rule ledger. ufw on gpu02 adds the rule and then ends every SSH session of
// the provider's account there, before the create could finish. The rule is the provider's own
// work: the next apply replaces the tainted rule (adopted stays false), and destroy removes it
// from UFW and the ledger. On the old code the retry adopted the rule it had added itself
// (adopted = true), and destroy left it open on the node.
func TestAccOwnership_firewallRuleConnectionCutDuringCreate(t *testing.T) {
	l := lab.Require(t)
	const node, port, key = "gpu02", "5609", "allow:5609/tcp:from=10.0.0.0/24"
	const cutter = `dpkg-divert --quiet --local --rename --add /usr/sbin/ufw
cat > /usr/sbin/ufw <<'EOF'
#!/bin/sh
/usr/sbin/ufw.distrib "$@"; rc=$?
case "$*" in *" port 5609 "*) pkill -KILL -u %s ;; esac
exit $rc
EOF
chmod 0755 /usr/sbin/ufw`
	restore := func() error {
		_, err := onHostErr(l, node, `if dpkg-divert --list /usr/sbin/ufw | grep -q .; then
  rm -f /usr/sbin/ufw && dpkg-divert --quiet --local --rename --remove /usr/sbin/ufw
fi`)
		return err
	}
	onHost(t, l, node, fmt.Sprintf(cutter, l.AdminUser))
	t.Cleanup(func() {
		_ = restore()
		_, _ = onHostErr(l, node, "ufw delete allow proto tcp from 10.0.0.0/24 to any port "+port+" >/dev/null 2>&1; true")
	})
	config := firewallRuleConfig(l, "test", node, port, "tcp", "10.0.0.0/24", "tacc cut")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkFirewallClean(l, node, key),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`Connection\s+To\s+gpu02\s+Lost`),
			},
			{
				PreConfig: func() {
					if err := checkTupleCount(l, node, port, 1)(nil); err != nil {
						t.Fatalf("the cut create should have added the rule: %v", err)
					}
					if err := restore(); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_firewall_rule.test", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("adopted"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("gpucluster_firewall_rule.test", tfjsonpath.New("recorded"), knownvalue.Bool(true)),
				},
				Check: checkTupleCount(l, node, port, 1),
			},
		},
	})
}

// A create that dies with the provider (no partial state can reach Terraform) leaves its record
// unfinished (phase=creating) on login01, with the group made on the nodes it reached. The next
// plan is refused, saying that an apply started creating the group and did not finish and how to
// take it over, and nothing changes. The import takes the unfinished record over and the apply
// that follows finishes it (phase=created): the group is this state's own, not adopted
// (adopted_on stays empty), another working directory's import no longer takes it over too, and
// destroy removes it from every node with its record. Before, the record stayed unfinished after
// the import, so a second state's import took it over as well and either destroy removed the
// other's group.
func TestAccOwnership_createKilledWithTheProviderIsNotAdopted(t *testing.T) {
	l := lab.Require(t)
	const name, gid = "tacc_killed", 2969
	nodes := labNodeNames(l)
	record := ownership.Dir + "/group/" + name
	clean := func() {
		for _, n := range nodes {
			_, _ = onHostErr(l, n, "groupdel "+name+" 2>/dev/null; true")
		}
		_, _ = onHostErr(l, "login01", "rm -f "+record)
	}
	clean()
	t.Cleanup(clean)
	tf := newTerraformCLI(t)
	tf.write("main.tf", cliRequiredProviders+groupConfig(l, name, gid, nodes))
	held := holdCommand(t, l, "gpu01", "/usr/sbin/groupadd")
	apply := tf.start("apply", "-auto-approve")
	held.waitStarted(apply, 1)
	killChildren(t, apply.cmd.Process.Pid)
	apply.wait(1)
	held.release()
	held.waitGone()

	if got := onHost(t, l, "login01", "cat "+record); !strings.Contains(got, "phase=creating\n") || !strings.Contains(got, "workdir="+tf.dir+"\n") {
		t.Fatalf("the killed create left no unfinished record of this working directory:\n%s", got)
	}
	var made []string
	for _, n := range nodes {
		if _, err := onHostErr(l, n, "getent group "+name); err == nil {
			made = append(made, n)
		}
	}
	if len(made) == 0 {
		t.Fatal("the killed create made the group nowhere: the test would prove nothing")
	}
	before := snapshotHosts(t, l)
	unfinished := regexp.MustCompile(`(?s)Object Owned By Another Resource.*started creating it and did not finish.*import the object`)
	if code, out := tf.status("plan"); code != 1 || !unfinished.MatchString(oneSpaced(out)) {
		t.Fatalf("the plan after the killed create exited %d, want 1 naming the unfinished create:\n%s", code, out)
	}
	compareSnapshots(t, before, snapshotHosts(t, l))

	tf.run(0, "import", "gpucluster_group.test", name+"@"+strings.Join(made, ","))
	tf.run(0, "apply", "-auto-approve")
	if got := tf.run(0, "show", "-json"); !strings.Contains(got, `"adopted_on":[]`) {
		t.Errorf("the group taken over from the killed create is adopted somewhere:\n%s", got)
	}
	if got := onHost(t, l, "login01", "cat "+record); !strings.Contains(got, "phase=created\n") {
		t.Errorf("the record after the take-over is not finished:\n%s", got)
	}
	// Finished, the record is this state's alone: another working directory's import of the
	// group no longer takes it over too, and every plan there is refused.
	other := tf.sibling()
	other.write("main.tf", cliRequiredProviders+groupConfig(l, name, gid, nodes))
	if code, out := other.status("import", "gpucluster_group.test", name+"@"+strings.Join(nodes, ",")); code != 0 || !strings.Contains(oneSpaced(out), "Imported Object Has Another Owner") {
		t.Errorf("another directory's import exited %d, want 0 warning of the owner:\n%s", code, out)
	}
	if code, out := other.status("plan"); code != 1 || !strings.Contains(oneSpaced(out), "Object Owned By Another Resource") {
		t.Errorf("another directory's plan after its import exited %d, want 1 naming the owner:\n%s", code, out)
	}
	for _, n := range nodes {
		if got := onHost(t, l, n, "getent group "+name+" | cut -d: -f3"); got != fmt.Sprint(gid) {
			t.Errorf("%s: gid of %s is %q, want %d", n, name, got, gid)
		}
	}
	tf.run(0, "destroy", "-auto-approve")
	if err := checkGroupGone(l, name, nodes)(nil); err != nil {
		t.Error(err)
	}
	if _, err := onHostErr(l, "login01", "test ! -e "+record); err != nil {
		t.Errorf("the record outlived destroy: %v", err)
	}
}

// killChildren kills the processes that pid started (terraform's provider plugin), as a crash
// or an OOM kill of the provider would end it: with no reply to Terraform.
func killChildren(t *testing.T, pid int) {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, f := range tasks {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(raw)) {
			child, err := strconv.Atoi(field)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(child, syscall.SIGKILL); err == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatalf("terraform (pid %d) has no child process to kill", pid)
	}
}

// uidEverywhere wants the account on every node, with uid.
func uidEverywhere(l *lab.Lab, nodes []string, name, uid string) error {
	for _, node := range nodes {
		got, err := onHostErr(l, node, "getent passwd "+name+" | cut -d: -f3")
		if err != nil {
			return err
		}
		if got != uid {
			return fmt.Errorf("%s: uid of %s is %q, want %s", node, name, got, uid)
		}
	}
	return nil
}

// userAndRecordGone wants the account gone from every node and its record from login01.
func userAndRecordGone(l *lab.Lab, nodes []string, name string) error {
	for _, node := range nodes {
		got, err := onHostErr(l, node, "getent passwd "+name+" || true")
		if err != nil {
			return err
		}
		if got != "" {
			return fmt.Errorf("%s: %s outlived destroy: %s", node, name, got)
		}
	}
	got, err := onHostErr(l, "login01", "ls -A "+ownership.Dir+"/user/ 2>/dev/null || true")
	if err != nil {
		return err
	}
	if slices.Contains(strings.Fields(got), name) {
		return fmt.Errorf("the record of %s outlived destroy: %s", name, got)
	}
	return nil
}

// The cases of a second declaration in one configuration, against the lab: a second
// gpucluster_firewall for gpu01 that would open it (default_incoming = "allow"), a second Slurm
// partition, node, account and QOS, MUNGE key, user and group, and a second resource for a user
// the configuration already manages. Each
// plan is refused naming the object, and no host changes: /etc, /home, the ledgers and the
// ownership records keep their sha256.
func TestAccOwnership_secondDeclarationChangesNothing(t *testing.T) {
	l := lab.Require(t)
	nodes := hclList(labNodeNames(l))
	user := func(address string) string {
		return fmt.Sprintf("resource \"gpucluster_user\" %q {\n  name  = \"tacc_twice\"\n  uid   = 1964\n  group = \"users\"\n  nodes = %s\n}\n", address, nodes)
	}
	group := func(address string) string {
		return fmt.Sprintf("resource \"gpucluster_group\" %q {\n  name  = \"tacc_twice\"\n  gid   = 2964\n  nodes = %s\n}\n", address, nodes)
	}
	munge := func(address string) string {
		return fmt.Sprintf("resource \"gpucluster_munge_key\" %q {\n  controller = \"login01\"\n  nodes      = %s\n}\n", address, nodes)
	}
	firewall := firewallRuleBlock("ssh", "gpu01", "22", "tcp", "10.0.0.10", "SSH from login node") + `
resource "gpucluster_firewall" "a" {
  node     = "gpu01"
  ssh_rule = gpucluster_firewall_rule.ssh.id
}
resource "gpucluster_firewall" "b" {
  node             = "gpu01"
  ssh_rule         = gpucluster_firewall_rule.ssh.id
  default_incoming = "allow"
}
`
	slurm := func(typ, body string) string {
		return fmt.Sprintf("resource %q \"a\" {\n  controller = \"login01\"\n%s}\nresource %q \"b\" {\n  controller = \"login01\"\n%s}\n", typ, body, typ, body)
	}
	twice := `(?s)Object Declared Twice.*also\s+declares\s+`
	cases := map[string]struct{ config, want string }{
		"partition": {slurm("gpucluster_slurm_partition", "  name         = \"gpu\"\n  nodes        = [\"gpu01\"]\n  allow_groups = [\"users\"]\n"),
			twice + `slurm\s+partition\s+gpu\s+on\s+node\s+login01`},
		"slurm node": {slurm("gpucluster_slurm_node", "  name = \"gpu01\"\n"), twice + `slurm\s+node\s+gpu01\s+on\s+node\s+login01`},
		"account":    {slurm("gpucluster_slurm_account", "  name = \"tacc_twice\"\n"), twice + `slurm\s+account\s+tacc_twice`},
		"qos":        {slurm("gpucluster_slurm_qos", "  name = \"tacc_twice\"\n"), twice + `slurm\s+qos\s+tacc_twice`},
		"firewall":   {firewall, twice + `firewall\s+ufw\s+on\s+node\s+gpu01`},
		"munge key":  {munge("a") + munge("b"), twice + `munge\s+key\s+munge.key`},
		"user":       {user("a") + user("b"), twice + `user\s+tacc_twice`},
		"group":      {group("a") + group("b"), twice + `group\s+tacc_twice`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := snapshotHosts(t, l)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      providerConfig(l, "") + tc.config,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
			compareSnapshots(t, before, snapshotHosts(t, l))
		})
	}

	t.Run("added beside an existing one", func(t *testing.T) {
		var before map[string]string
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			CheckDestroy:             func(*terraform.State) error { return userAndRecordGone(l, labNodeNames(l), "tacc_twice") },
			Steps: []resource.TestStep{
				{Config: providerConfig(l, "") + user("a")},
				{
					PreConfig:   func() { before = snapshotHosts(t, l) },
					Config:      providerConfig(l, "") + user("a") + user("b"),
					ExpectError: regexp.MustCompile(twice + `user\s+tacc_twice`),
				},
				{
					PreConfig: func() { compareSnapshots(t, before, snapshotHosts(t, l)) },
					Config:    providerConfig(l, "") + user("a"),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
				},
			},
		})
	})
}

// The second declaration from another state, where no plan sees both: gpu01's firewall
// with default_incoming = "allow", and a group, each declared again in a second state while the
// first state owns them. Each plan is refused naming the owner's record, and no host changes:
// gpu01's UFW still denies incoming, and /etc, /home, the ledgers and the records keep their
// sha256. The owner's destroy then removes both and their records.
func TestAccOwnership_anotherStateIsRefused(t *testing.T) {
	l := lab.Require(t)
	const node, name = "gpu01", "tacc_other"
	nodes := hclList(labNodeNames(l))
	group := fmt.Sprintf("resource \"gpucluster_group\" \"a\" {\n  name  = %q\n  gid   = 2968\n  nodes = %s\n}\n", name, nodes)
	firewall := func(incoming string) string {
		return fmt.Sprintf("resource \"gpucluster_firewall\" \"a\" {\n  node             = %q\n  ssh_rule         = \"gpu01:allow:22/tcp:from=10.0.0.10\"\n  default_incoming = %q\n  depends_on       = [gpucluster_firewall_rule.ssh]\n}\n", node, incoming)
	}
	owner := providerConfig(l, "") + firewallRuleBlock("ssh", node, "22", "tcp", "10.0.0.10", "SSH from login node") + firewall("deny") + group
	t.Cleanup(func() { _, _ = onHostErr(l, node, "ufw disable >/dev/null") })
	cases := map[string]struct{ config, want string }{
		"firewall": {providerConfig(l, "") + strings.Replace(firewall("allow"), "  depends_on       = [gpucluster_firewall_rule.ssh]\n", "", 1),
			`(?s)Object Owned By Another Resource.*firewall\s+ufw\s+is\s+recorded\s+as\s+owned\s+by\s+a\s+gpucluster_firewall\s`},
		"group": {providerConfig(l, "") + group, `(?s)Object Owned By Another Resource.*group\s+` + name + `\s+is\s+recorded\s+as\s+owned\s+by\s+a\s+gpucluster_group\s`},
	}
	incomingDenied := checkOnHost(l, node, "ufw status verbose | grep -o '[a-z]* (incoming)'", "deny (incoming)")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkFirewallClean(l, node, "allow:22/tcp:from=10.0.0.10"),
			checkOnHost(l, "login01", "ls -A "+ownership.Dir+"/group/ 2>/dev/null | grep -cx "+name+" || true", "0"),
			checkOnHost(l, node, "ls -A "+ownership.Dir+"/firewall/ 2>/dev/null | grep -cx ufw || true", "0"),
			func(*terraform.State) error {
				_, err := onHostErr(l, node, "! getent group "+name)
				return err
			},
		),
		Steps: []resource.TestStep{{
			Config: owner,
			Check: resource.ComposeAggregateTestCheckFunc(incomingDenied, func(*terraform.State) error {
				for kind, tc := range cases {
					t.Run(kind+" from another state", func(t *testing.T) {
						before := snapshotHosts(t, l)
						resource.Test(t, resource.TestCase{
							ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
							Steps: []resource.TestStep{{
								Config:      tc.config,
								ExpectError: regexp.MustCompile(tc.want),
							}},
						})
						compareSnapshots(t, before, snapshotHosts(t, l))
					})
				}
				return incomingDenied(nil)
			}),
		}},
	})
}

// The record is the authority where no plan sees both declarations: under -target, a second
// resource for a user that the first created is planned alone, so the check within one
// configuration cannot see the first. Its plan is refused naming the record, and no host
// changes; the first resource keeps the user, and destroy removes it with its record.
func TestAccOwnership_targetedSecondDeclarationIsRefused(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_target"
	nodes := labNodeNames(l)
	for _, node := range nodes {
		onHost(t, l, node, "userdel "+name+" 2>/dev/null; rm -f "+ownership.Dir+"/user/"+name)
	}
	user := func(address string) string {
		return fmt.Sprintf("resource \"gpucluster_user\" %q {\n  name  = %q\n  uid   = 1967\n  group = \"users\"\n  nodes = %s\n}\n", address, name, hclList(nodes))
	}
	tf := newTerraformCLI(t)
	tf.write("main.tf", cliRequiredProviders+providerConfig(l, "")+user("a")+user("b"))
	t.Cleanup(func() { tf.status("destroy", "-auto-approve", "-target=gpucluster_user.a") })
	tf.run(0, "apply", "-auto-approve", "-target=gpucluster_user.a")

	before := snapshotHosts(t, l)
	ownedBy := regexp.MustCompile(`(?s)Object Owned By Another Resource.*user\s+` + name + `\s+is\s+recorded\s+as\s+owned\s+by\s+a\s+gpucluster_user\s`)
	for _, args := range [][]string{{"plan"}, {"apply", "-auto-approve"}} {
		if code, out := tf.status(append(args, "-target=gpucluster_user.b")...); code != 1 || !ownedBy.MatchString(oneSpaced(out)) {
			t.Fatalf("terraform %v -target=gpucluster_user.b exited %d, want 1 naming the record:\n%s", args, code, out)
		}
	}
	compareSnapshots(t, before, snapshotHosts(t, l))
	if got := tf.run(0, "show", "-json"); !strings.Contains(got, `"address":"gpucluster_user.a"`) || strings.Contains(got, `"address":"gpucluster_user.b"`) {
		t.Errorf("state after the refused apply does not hold gpucluster_user.a alone:\n%s", got)
	}
	tf.run(0, "destroy", "-auto-approve", "-target=gpucluster_user.a")
	if err := userAndRecordGone(l, nodes, name); err != nil {
		t.Error(err)
	}
}

// The Slurm cases from another state, where no plan sees both: with the lab cluster
// applied (partition gpu with AllowGroups=users, node gpu01, the MUNGE key), a second state
// declaring partition gpu open to every group, node gpu01 with other GRES, or a MUNGE key for the
// same nodes is refused at plan naming the owner's record. slurmctld's partition and node keep
// their settings, and /etc, /home, the ledgers and the records keep their sha256.
func TestAccOwnership_slurmObjectsFromAnotherState(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01"}
	owned := `(?s)Object Owned By Another Resource.*%s\s+is\s+recorded\s+as\s+owned\s+by\s+a\s+gpucluster_%s\s`
	cases := map[string]struct{ config, want string }{
		// Without allow_groups, every group may submit: the AllowGroups=ALL.
		"partition": {`
resource "gpucluster_slurm_partition" "open" {
  controller = "login01"
  name       = "gpu"
  nodes    = ["gpu01"]
  max_time = "01:00:00"
}
`, fmt.Sprintf(owned, `slurm\s+partition\s+gpu`, "slurm_partition")},
		"slurm node": {`
resource "gpucluster_slurm_node" "other" {
  controller = "login01"
  name       = "gpu01"
  gres       = "gpu:2"
  gpu_files  = "/dev/nvidia[0-1]"
}
`, fmt.Sprintf(owned, `slurm\s+node\s+gpu01`, "slurm_node")},
		"munge key": {fmt.Sprintf(`
resource "gpucluster_munge_key" "other" {
  controller = "login01"
  nodes      = %s
}
`, hclList(labNodeNames(l))), fmt.Sprintf(owned, `munge\s+key\s+munge.key`, "munge_key")},
	}
	slurmView := "scontrol show partition gpu | grep -o -e 'AllowGroups=[^ ]*' -e 'MaxTime=[^ ]*' | paste -sd' ' - && scontrol show node gpu01 | grep -o 'Gres=[^ ]*'"
	testFromIdleCluster(t, l, labCluster{computeNodes: gpus}, gpus, []resource.TestStep{{
		Config: labCluster{computeNodes: gpus}.config(l),
		Check: func(*terraform.State) error {
			want := onHost(t, l, "login01", slurmView)
			if !strings.Contains(want, "AllowGroups=users") {
				t.Fatalf("the owner's partition is not restricted to users: the test would prove nothing:\n%s", want)
			}
			for kind, tc := range cases {
				t.Run(kind+" from another state", func(t *testing.T) {
					before := snapshotHosts(t, l)
					resource.Test(t, resource.TestCase{
						ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
						Steps: []resource.TestStep{{
							Config:      providerConfig(l, "") + tc.config,
							ExpectError: regexp.MustCompile(tc.want),
						}},
					})
					compareSnapshots(t, before, snapshotHosts(t, l))
					if got := onHost(t, l, "login01", slurmView); got != want {
						t.Errorf("slurmctld's view changed:\n%s\nwant\n%s", got, want)
					}
				})
			}
			return nil
		},
	}})
}

// A recorded resource's update in place leaves its record as it is: no rewrite, no round trip.
func TestAccOwnership_updateLeavesTheRecord(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_upd"
	nodes := labNodeNames(l)
	for _, node := range nodes {
		onHost(t, l, node, "userdel "+name+" 2>/dev/null; rm -f "+ownership.Dir+"/user/"+name)
	}
	record := "stat -c '%Y %i' " + ownership.Dir + "/user/" + name + " && sha256sum < " + ownership.Dir + "/user/" + name
	var before string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return userAndRecordGone(l, nodes, name) },
		Steps: []resource.TestStep{
			{
				Config: ownedUserConfig(l, name, 1965, "  shell = \"/bin/bash\"\n"),
				Check:  func(*terraform.State) error { before = onHost(t, l, "login01", record); return nil },
			},
			{
				// A second apart, so that a rewrite would show in the modification time too.
				PreConfig: func() { time.Sleep(time.Second) },
				Config:    ownedUserConfig(l, name, 1965, "  shell = \"/bin/sh\"\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_user.test", plancheck.ResourceActionUpdate)},
				},
				Check: func(*terraform.State) error {
					if after := onHost(t, l, "login01", record); after != before {
						return fmt.Errorf("the update rewrote the record:\nbefore %s\nafter  %s", before, after)
					}
					return uidEverywhere(l, nodes, name, "1965")
				},
			},
		},
	})
}

// Issue #25's other half: a user removed by hand on every node, while its record on login01
// still names this very instance. The refresh keeps the instance (its token with it) and the plan
// replaces it: the apply creates the user again, recorded as this instance's. On the old code
// the refresh dropped it, and the create failed at apply with Object Owned By Another Resource.
// The same holds after a refresh-only run, which saves what the refresh found before any plan.
// Another working directory is still refused, and destroy removes the user and the record. The
// terraform binary runs here, as an admin would: the test framework refreshes before every apply.
func TestAccOwnership_removedByHandIsCreatedAgain(t *testing.T) {
	l := lab.Require(t)
	const name = "tacc_gone"
	nodes := labNodeNames(l)
	recordPath := ownership.Dir + "/user/" + name
	removeByHand := func() {
		for _, node := range nodes {
			onHost(t, l, node, "userdel "+name+" 2>/dev/null || true")
		}
	}
	removeByHand()
	onHost(t, l, "login01", "rm -f "+recordPath)
	config := cliRequiredProviders + ownedUserConfig(l, name, 1966, "")
	tf := newTerraformCLI(t)
	tf.write("main.tf", config)
	t.Cleanup(func() { tf.status("destroy", "-auto-approve") })
	tf.run(0, "apply", "-auto-approve")

	for _, before := range [][]string{nil, {"apply", "-refresh-only", "-auto-approve"}} {
		removeByHand()
		if before != nil {
			tf.run(0, before...)
		}
		out := oneSpaced(tf.run(0, "apply", "-auto-approve"))
		if !strings.Contains(out, "Warning: Object Removed Outside Terraform") || !strings.Contains(out, "1 added, 0 changed, 1 destroyed") {
			t.Fatalf("the apply after userdel (then %v) did not replace the user, saying why:\n%s", before, out)
		}
		if err := uidEverywhere(l, nodes, name, "1966"); err != nil {
			t.Fatal(err)
		}
		if got := onHost(t, l, "login01", "cat "+recordPath); !strings.Contains(got, "phase=created\n") || !strings.Contains(got, "workdir="+tf.dir+"\n") {
			t.Fatalf("the record after the user was made again does not name this working directory:\n%s", got)
		}
	}
	other := tf.sibling()
	other.write("main.tf", config)
	ownedBy := regexp.MustCompile(`(?s)Object Owned By Another Resource.*` + regexp.QuoteMeta(tf.dir))
	if code, out := other.status("plan"); code != 1 || !ownedBy.MatchString(oneSpaced(out)) {
		t.Fatalf("another working directory's plan exited %d, want 1 naming the owner:\n%s", code, out)
	}
	tf.run(0, "destroy", "-auto-approve")
	if err := userAndRecordGone(l, nodes, name); err != nil {
		t.Fatal(err)
	}
}

// Two rolling reboots never take the same GPU server: each server of a run is an owned object,
// recorded on the controller. A second resource listing gpu01 is refused at plan, in this
// configuration (Object Declared Twice) and from another state (the record), and no host changes;
// a resource with other servers owns those, also when a server is added to it in place, and
// each record goes with the server's removal or the resource's destroy. The servers are recorded
// as rebooted for the trigger beforehand, so no apply reboots one.
func TestAccOwnership_rollingRebootServersHaveOneOwner(t *testing.T) {
	l := lab.Require(t)
	const trigger = "tacc-own"
	records := ownership.Dir + "/rolling_reboot/"
	done := func(nodes ...string) string {
		script := "mkdir -p " + slurm.RebootRecordDir
		for _, n := range nodes {
			script += " && echo " + trigger + " > " + slurm.RebootRecordDir + "/" + n
		}
		return script
	}
	onHost(t, l, "login01", "rm -rf "+records+" && "+done("gpu01", "gpu02"))
	t.Cleanup(func() {
		_, _ = onHostErr(l, "login01", "rm -rf "+records+" "+slurm.RebootRecordDir+"/gpu01 "+slurm.RebootRecordDir+"/gpu02")
	})
	run := func(address string, nodes ...string) string {
		return fmt.Sprintf("resource \"gpucluster_rolling_reboot\" %q {\n  controller = \"login01\"\n  nodes      = %s\n  trigger    = %q\n}\n", address, hclList(nodes), trigger)
	}
	owners := func(want string) resource.TestCheckFunc {
		return checkOnHost(l, "login01", "ls "+records+" 2>/dev/null | paste -sd' ' -", want)
	}
	tokenOf := func(node string) string {
		return onHost(t, l, "login01", "sed -n 's/^token=//p' "+records+node)
	}
	var before map[string]string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             owners(""),
		Steps: []resource.TestStep{
			{
				Config: providerConfig(l, "") + run("a", "gpu01"),
				Check: resource.ComposeAggregateTestCheckFunc(owners("gpu01"), func(*terraform.State) error {
					before = snapshotHosts(t, l)
					t.Run("from another state", func(t *testing.T) {
						resource.Test(t, resource.TestCase{
							ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
							Steps: []resource.TestStep{{
								Config:      providerConfig(l, "") + run("b", "gpu02", "gpu01"),
								ExpectError: regexp.MustCompile(`(?s)Object Owned By Another Resource.*rolling\s+reboot\s+gpu01\s+is\s+recorded\s+as\s+owned\s+by\s+a\s+gpucluster_rolling_reboot`),
							}},
						})
					})
					compareSnapshots(t, before, snapshotHosts(t, l))
					return nil
				}),
			},
			{
				PreConfig:   func() { before = snapshotHosts(t, l) },
				Config:      providerConfig(l, "") + run("a", "gpu01") + run("b", "gpu02", "gpu01"),
				ExpectError: regexp.MustCompile(`(?s)Object Declared Twice.*also\s+declares\s+rolling\s+reboot\s+gpu01\s+on\s+node\s+login01`),
			},
			{
				PreConfig: func() { compareSnapshots(t, before, snapshotHosts(t, l)) },
				Config:    providerConfig(l, "") + run("a", "gpu01") + run("c", "gpu02"),
				Check:     owners("gpu01 gpu02"),
			},
			{
				// c's destroy releases gpu02's record; the next step adds gpu02 to a in place.
				Config: providerConfig(l, "") + run("a", "gpu01"),
				Check:  owners("gpu01"),
			},
			{
				Config: providerConfig(l, "") + run("a", "gpu01", "gpu02"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("gpucluster_rolling_reboot.a", plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(owners("gpu01 gpu02"), func(*terraform.State) error {
					if a, b := tokenOf("gpu01"), tokenOf("gpu02"); a == "" || a != b {
						return fmt.Errorf("the server added in place is recorded with token %q, gpu01 with %q: want the one resource's", b, a)
					}
					return nil
				}),
			},
			{
				Config: providerConfig(l, "") + run("a", "gpu02"),
				Check:  owners("gpu02"),
			},
		},
	})
}
