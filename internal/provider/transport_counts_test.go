package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// runCounter counts the provider's configurations: each is one Terraform run (plan, apply,
// refresh) that may reach the hosts, and so may cost each host one sudo authentication.
type runCounter struct {
	tfprotov6.ProviderServer
	runs *atomic.Int32
}

func (c runCounter) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	c.runs.Add(1)
	return c.ProviderServer.ConfigureProvider(ctx, req)
}

func countingFactories(runs *atomic.Int32) map[string]func() (tfprotov6.ProviderServer, error) {
	serve := providerserver.NewProtocol6WithError(New("test")())
	return map[string]func() (tfprotov6.ProviderServer, error){
		"gpucluster": func() (tfprotov6.ProviderServer, error) {
			s, err := serve()
			return runCounter{ProviderServer: s, runs: runs}, err
		},
	}
}

// Lines each host's journal gets (extended regular expressions): one sudo session per sudo that
// ran a command; one per password check that failed (pam_unix's "authentication failure" line
// comes once per sudo however many checks failed, so it cannot count them: unix_chkpwd's line
// does, and an empty answer at a later prompt is "could not identify password"); one accepted
// key per SSH connection.
const (
	journalSudoSession = `pam_unix\(sudo:session\): session opened for user root`
	journalSudoFailure = `password check failed for user \(|pam_unix\(sudo:auth\): auth could not identify password`
	journalSSHAccepted = `Accepted publickey for `
)

// journalCounts counts the lines matching pattern in every host's journal, read through the
// lab, never through the provider.
func journalCounts(t *testing.T, l *lab.Lab, pattern string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, h := range l.Hosts {
		out := onHost(t, l, h.Name, "journalctl -o cat --no-pager | grep -c -E -- "+shellQuote(pattern)+" || true")
		n, err := strconv.Atoi(out)
		if err != nil {
			t.Fatalf("%s: counting %q: %q", h.Name, pattern, out)
		}
		counts[h.Name] = n
	}
	return counts
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// assertPerRun checks that every host logged line at least once and at most once per run.
func assertPerRun(t *testing.T, what string, before, after map[string]int, runs int32) {
	t.Helper()
	for host, n := range after {
		got := n - before[host]
		t.Logf("%s: %d %s in %d runs", host, got, what, runs)
		if got < 1 || got > int(runs) {
			t.Errorf("%s: %d %s in %d runs, want 1 to %d (at most one per run)", host, got, what, runs, runs)
		}
	}
}

// twentyUsersConfig is the guide's scale: about twenty cluster users, each on every node.
func twentyUsersConfig(l *lab.Lab, password string) string {
	var b strings.Builder
	b.WriteString(replaceSudoPassword(providerConfig(l, ""), l.AdminPassword, password))
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, `
resource "gpucluster_user" "u%02[1]d" {
  name  = "tsudo%02[1]d"
  uid   = %[2]d
  group = "users"
  nodes = %[3]s
}
`, i, 3000+i, hclList(labNodeNames(l)))
	}
	return b.String()
}

// With twenty users on every node and Terraform's default parallelism, every run costs each
// host one SSH connection and one sudo, and no command fails for want of an SSH session.
func TestAccTransport_oneSudoPerHostPerRun(t *testing.T) {
	l := lab.Require(t)
	var runs atomic.Int32
	sudoBefore := journalCounts(t, l, journalSudoSession)
	sshBefore := journalCounts(t, l, journalSSHAccepted)
	config := twentyUsersConfig(l, l.AdminPassword)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: countingFactories(&runs),
		CheckDestroy: resource.ComposeTestCheckFunc(
			checkUserGone(l, "tsudo01", labNodeNames(l), ""),
			checkUserGone(l, "tsudo20", labNodeNames(l), ""),
		),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					for _, h := range l.Hosts {
						out, err := onHostErr(l, h.Name, "getent passwd tsudo01 tsudo20 | cut -d: -f3 | paste -sd' '")
						if err != nil {
							return err
						}
						if out != "3001 3020" {
							return fmt.Errorf("%s: tsudo01 and tsudo20 have UIDs %q, want 3001 3020", h.Name, out)
						}
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
	sudoAfter, sshAfter := journalCounts(t, l, journalSudoSession), journalCounts(t, l, journalSSHAccepted)
	assertPerRun(t, "sudo sessions", sudoBefore, sudoAfter, runs.Load())
	assertPerRun(t, "SSH connections", sshBefore, sshAfter, runs.Load())
	for host := range sudoAfter {
		if sudo, ssh := sudoAfter[host]-sudoBefore[host], sshAfter[host]-sshBefore[host]; sudo != ssh {
			t.Errorf("%s: %d sudo sessions for %d SSH connections, want one per connection", host, sudo, ssh)
		}
	}
}

// faillockAuth is Debian's common-auth with pam_faillock as hardened hosts set it up: three
// failed authentications lock the account for ten minutes.
const faillockAuth = `auth requisite pam_faillock.so preauth deny=3 unlock_time=600
auth [success=2 default=ignore] pam_unix.so nullok
auth [default=die] pam_faillock.so authfail deny=3 unlock_time=600
auth requisite pam_deny.so
auth required pam_permit.so
auth sufficient pam_faillock.so authsucc
`

// withFaillock turns pam_faillock on for one lab host for the rest of the test.
func withFaillock(t *testing.T, l *lab.Lab, host string) {
	t.Helper()
	onHost(t, l, host, "cp -p /etc/pam.d/common-auth /etc/pam.d/common-auth.gpucluster-test && printf '%s' "+shellQuote(faillockAuth)+" > /etc/pam.d/common-auth && faillock --user "+l.AdminUser+" --reset")
	t.Cleanup(func() {
		onHost(t, l, host, "mv -f /etc/pam.d/common-auth.gpucluster-test /etc/pam.d/common-auth && faillock --user "+l.AdminUser+" --reset")
	})
}

// A wrong sudo password is tried once per host per run, never once per resource, and sudo is
// stopped at its second prompt: every host's journal shows one failed password check. On a host
// with pam_faillock's usual deny=3 (where sudo-rs itself gives up after one failure), a plan with
// the wrong password leaves one failure on record, not one per resource, and the admin can still
// sudo there.
func TestAccTransport_wrongSudoPasswordTriedOncePerHost(t *testing.T) {
	l := lab.Require(t)
	const guarded = "gpu02"
	withFaillock(t, l, guarded)
	var runs atomic.Int32
	before := journalCounts(t, l, journalSudoFailure)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: countingFactories(&runs),
		Steps: []resource.TestStep{{
			Config:      twentyUsersConfig(l, "not the password"),
			ExpectError: regexp.MustCompile(`(?s)Sudo Password Rejected.*tries the password once per node per run`),
		}},
	})
	assertPerRun(t, "failed sudo authentications", before, journalCounts(t, l, journalSudoFailure), runs.Load())
	if out := onHost(t, l, guarded, "faillock --user "+l.AdminUser+" | grep -c ' V$' || true"); out != "1" {
		t.Errorf("%s: pam_faillock recorded %s failures of %s, want 1", guarded, out, l.AdminUser)
	}
	if out, err := onHostErr(l, guarded, "printf '%s\\n' "+shellQuote(l.AdminPassword)+" | runuser -u "+l.AdminUser+" -- sudo -S -k -p '' id -u"); err != nil || out != "0" {
		t.Errorf("%s: %s cannot sudo after the plan (%q, %v): the account is locked", guarded, l.AdminUser, out, err)
	}
}

// commandCounter counts one run's root-shell commands per host from the transport's "sudo
// command" events, passing every event on to Terraform's log.
type commandCounter struct {
	tflogLogger
	mu     sync.Mutex
	counts map[string]int
}

func (c *commandCounter) Debug(ctx context.Context, msg string, fields map[string]any) {
	if msg == "sudo command" || msg == "sudo command failed" {
		c.mu.Lock()
		c.counts[fmt.Sprint(fields["node"])]++
		c.mu.Unlock()
	}
	c.tflogLogger.Debug(ctx, msg, fields)
}

// countCommands gives every provider run started from now on a counter of its own; runs
// returns them in the order the runs configured.
func countCommands(t *testing.T) (runs func() []map[string]int) {
	var mu sync.Mutex
	var counters []*commandCounter
	saved := newRunLogger
	newRunLogger = func() transport.Logger {
		c := &commandCounter{counts: map[string]int{}}
		mu.Lock()
		counters = append(counters, c)
		mu.Unlock()
		return c
	}
	t.Cleanup(func() { newRunLogger = saved })
	return func() []map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make([]map[string]int, len(counters))
		for i, c := range counters {
			c.mu.Lock()
			out[i] = maps.Clone(c.counts)
			c.mu.Unlock()
		}
		return out
	}
}

// readsPerHostConfig puts on each of nodes what every node of the guide's cluster carries
// several of: the node and its facts, accounts, firewall rules, and MUNGE, whose key and
// daemon every node reads. count, not for_each: the testing framework's state checks do not
// take string keys.
func readsPerHostConfig(l *lab.Lab, nodes []string) string {
	var b strings.Builder
	b.WriteString(providerConfig(l, ""))
	fmt.Fprintf(&b, `
locals {
  nodes = %s
}

resource "gpucluster_node" "n" {
  count = length(local.nodes)
  name  = local.nodes[count.index]
}

data "gpucluster_node_facts" "n" {
  count = length(local.nodes)
  node  = local.nodes[count.index]
}

resource "gpucluster_munge_key" "k" {
  controller = local.nodes[0]
  nodes      = local.nodes
}

resource "gpucluster_firewall_rule" "r" {
  count   = 3 * length(local.nodes)
  node    = local.nodes[floor(count.index / 3)]
  port    = 7101 + count.index %% 3
  proto   = "tcp"
  from    = "10.0.0.0/24"
  comment = "transport counts"
}
`, hclList(nodes))
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, `
resource "gpucluster_user" "u%[1]d" {
  name  = "tcount%[1]d"
  uid   = %[2]d
  group = "users"
  nodes = local.nodes
}
`, i, 3100+i)
	}
	return b.String()
}

// A no-op plan costs each host one command per kind of state read there, however many
// resources read it: the node's facts (gpucluster_node and gpucluster_node_facts), its
// accounts (five users), its firewall rules (three rules), and its daemons: the MUNGE key's
// checksum and MUNGE's installed version come from the host's shared read of unit states,
// which munged's state needs anyway. Reads are shared within a run only until a command that is not a read (run through
// Sudo, not Read) runs on the host, so one read sent as Sudo among them shows here as a second
// listing of the accounts or of the rules, and a key read of its own as a fifth command.
func TestAccTransport_commandsPerHostPerNoOpPlan(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)[:3]
	const wantPerHost = 4
	config := readsPerHostConfig(l, nodes)
	runs := countCommands(t)
	var applied int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, "tcount1", nodes, ""),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					applied = len(runs())
					return nil
				},
			},
			{Config: config, PlanOnly: true},
			{Config: config, PlanOnly: true},
		},
	})
	// Every run after the apply's reads only: the framework's plans after the apply and in
	// the plan-only steps, some of them without refresh (they read only the data source), up
	// to the destroy, whose last run deletes.
	all := runs()
	refreshed := 0
	for i, counts := range all[applied : len(all)-1] {
		full := true
		for _, node := range nodes {
			t.Logf("no-op plan %d: %s: %d commands", i+1, node, counts[node])
			if counts[node] > wantPerHost {
				t.Errorf("no-op plan %d: %d commands on %s, want at most %d (facts, accounts, firewall rules, and units, key files and packages)", i+1, counts[node], node, wantPerHost)
			}
			full = full && counts[node] == wantPerHost
		}
		if full {
			refreshed++
		}
	}
	if refreshed < 2 {
		t.Errorf("%d no-op plans read every resource on every host (%d runs in all), want at least 2", refreshed, len(all))
	}
}
