package provider

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

func TestCheckProblemsNameTheNodes(t *testing.T) {
	problems := checkProblems("login01",
		map[string]string{"gpu01": "Success", "gpu02": "unmunge: STATUS Invalid credential (11)"},
		slurm.Health{Ping: "Slurmctld(primary) at login01 is DOWN", NodeStates: map[string]string{"gpu01": "idle", "gpu02": "down*"}})
	want := []string{
		"a MUNGE credential made on login01 does not decode on gpu02: unmunge: STATUS Invalid credential (11)",
		"node gpu02 is down*",
		"slurmctld on login01 does not answer: Slurmctld(primary) at login01 is DOWN",
	}
	wantProblems(t, problems, want)
}

// With MUNGE shared but no Slurm controller, the check reports exactly that; asked to fail on
// problems, it stops the run and names them.
func TestAccClusterCheck_reportsWhatIsMissing(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	config := func(failOnProblems bool) string {
		return mungeKeyConfig(l, "login01", nodes, "") + fmt.Sprintf(`
data "gpucluster_cluster_check" "test" {
  controller       = "login01"
  nodes            = %s
  fail_on_problems = %t
  depends_on       = [gpucluster_munge_key.test]
}
`, hclList(nodes), failOnProblems)
	}
	success := map[string]knownvalue.Check{}
	for _, n := range nodes {
		success[n] = knownvalue.StringExact("Success")
	}
	stopSlurmctld := func() { onHost(t, l, "login01", "systemctl stop slurmctld 2>/dev/null; true") }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMungeStillRunning(l, nodes),
		Steps: []resource.TestStep{
			{
				PreConfig: stopSlurmctld,
				Config:    config(false),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("munge"), knownvalue.MapExact(success)),
					statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("controller_up"), knownvalue.Bool(false)),
					// node_states is node_status's deprecated name: both hold sinfo's map, here empty with slurmctld down.
					statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("node_status"), knownvalue.MapExact(map[string]knownvalue.Check{})),
					statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("node_states"), knownvalue.MapExact(map[string]knownvalue.Check{})),
					statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("ok"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("problems"),
						knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringRegexp(regexp.MustCompile(`^slurmctld on login01 does not answer`))})),
				},
			},
			{
				PreConfig:   stopSlurmctld,
				Config:      config(true),
				ExpectError: regexp.MustCompile(`(?s)Cluster Check Failed.*slurmctld on login01 does not answer`),
			},
		},
	})
}

func TestBeegfsProblemsNameTheController(t *testing.T) {
	problems := beegfsProblems("login01", beegfs.Health{Failing: []string{"🛑 Reachability -> Not all targets are responding."}})
	wantProblems(t, problems, []string{"beegfs health check on login01: 🛑 Reachability -> Not all targets are responding."})
}

func TestHomeProblemsNameTheNodes(t *testing.T) {
	problems := homeProblems("beegfs", map[string]string{
		"login01": "beegfs",
		"gpu01":   "",
		"gpu02":   "ext4",
		"gpu03":   "unknown: connection refused",
	})
	sort.Strings(problems)
	want := []string{
		"/home on gpu01 is not mounted: beegfs-client did not mount it and the local /home underneath is in use " +
			"(see the guide's Troubleshooting: check systemctl status beegfs-client and lsmod | grep beegfs)",
		"/home on gpu02 is ext4, not beegfs",
		"/home on gpu03 could not be checked: connection refused",
	}
	wantProblems(t, problems, want)
}

// The guide's `findmnt -n -o FSTYPE /home` on every node: with BeeGFS mounted on login01 and
// gpu01 but not on gpu02, the check names gpu02 and only gpu02.
func TestAccClusterCheck_homes(t *testing.T) {
	l := lab.Require(t)
	nodes := labNodeNames(l)
	clients := []string{"login01", "gpu01"}
	prepareFreshBeegfs(t, l, clients)
	withoutServers(t, l, clients)
	config := mungeKeyConfig(l, "login01", nodes, "") +
		strings.TrimPrefix(beegfsClientConfig(l, true, l.Host("login01").Address), providerConfig(l, "")) + fmt.Sprintf(`
data "gpucluster_cluster_check" "test" {
  controller  = "login01"
  nodes       = %s
  home_fstype = %q
  depends_on  = [gpucluster_munge_key.test, gpucluster_beegfs_client.gpu01]
}
`, hclList(nodes), labClientFSType)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMungeStillRunning(l, nodes),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("home_mounts"), knownvalue.MapExact(map[string]knownvalue.Check{
					"login01": knownvalue.StringExact(labClientFSType),
					"gpu01":   knownvalue.StringExact(labClientFSType),
					"gpu02":   knownvalue.StringExact(""),
				})),
				statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("problems"),
					knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringRegexp(regexp.MustCompile(`^/home on gpu02 is not mounted`))})),
			},
		}},
	})
}

// wantProblems compares the problems a check reports with want, in order.
func wantProblems(t *testing.T, problems, want []string) {
	t.Helper()
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
