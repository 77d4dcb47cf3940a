package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

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
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
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
