package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// A health check program is refused at plan, on its attribute, without the interval slurmd
// needs to run it, and so are an interval and node states without a program.
func TestSlurmHealthCheckRefusedAtPlan(t *testing.T) {
	controller := func(args ...string) string {
		return block("gpucluster_slurm_controller", append([]string{`node = "login01"`}, args...)...)
	}
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"program without interval": {controller(`health_check_program = "#!/bin/sh\nexit 0\n"`),
			diagPattern("Invalid Slurm Setting", "health_check_program", "needs HealthCheckInterval").String()},
		"program without interpreter": {controller(`health_check_program = "exit 0\n"`, `health_check_interval = 30`),
			diagPattern("Invalid Slurm Setting", "health_check_program", "must start with an interpreter line").String()},
		"interval alone": {controller(`health_check_interval = 30`),
			diagPattern("Invalid Slurm Setting", "health_check_interval", "needs a health check program").String()},
		"unknown node state": {controller(`health_check_program = "#!/bin/sh\nexit 0\n"`, `health_check_interval = 30`, `health_check_node_state = ["BUSY"]`),
			`(?s)health_check_node_state.*value must be one of`},
	})
}

// healthCheck is the controller's health check program, run every interval seconds: it
// writes mark and the node's name to healthCheckMarker on the node it runs on.
func healthCheck(mark string, interval int) string {
	return fmt.Sprintf("  health_check_interval = %d\n  health_check_program = <<-EOT\n    #!/bin/sh\n    echo %s $SLURMD_NODENAME > %s\n  EOT\n", interval, mark, healthCheckMarker)
}

const healthCheckMarker = "/tmp/gpucluster-healthcheck-ran"

// TestAccSlurmController_healthCheck sets a health check program on a running cluster of two
// GPU servers: the activation writes it on both (root, 0755) before slurm.conf names it, and
// slurmd runs it on both, which the file it writes shows. A new program alone is one write per
// server and restarts no slurmd, and it runs. A program edited by hand on gpu02 shows in the
// activation's plan and is written back there alone. Unset, the keys and both files go; set
// again, destroy removes it from both servers.
func TestAccSlurmController_healthCheck(t *testing.T) {
	l := lab.Require(t)
	gpus := []string{"gpu01", "gpu02"}
	withCheck := func(mark string) labCluster {
		return labCluster{computeNodes: gpus, controllerExtra: healthCheck(mark, 5)}
	}
	var slurmdSince string
	wrote := func(nodes ...string) knownvalue.Check {
		var checks []knownvalue.Check
		for _, n := range nodes {
			checks = append(checks, knownvalue.StringExact("wrote "+slurm.HealthCheckPath+" on "+n))
		}
		return knownvalue.ListExact(checks)
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkClusterDestroyed(l, gpus),
			checkOnHosts(l, gpus, "ls "+slurm.HealthCheckPath+" 2>/dev/null | wc -l", "0"),
		),
		Steps: []resource.TestStep{
			{
				Config:           withCheck("v1").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "HealthCheckProgram="+slurm.HealthCheckPath, "HealthCheckInterval=5"),
					checkOnHosts(l, gpus, "stat -c '%U %G %a' "+slurm.HealthCheckPath, "root root 755"),
					checkHealthCheckRan(l, gpus, "v1"),
				),
			},
			{
				ResourceName: slurmControllerAddr, ImportState: true, ImportStateId: "login01", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "node",
			},
			{
				// A new program alone: written on each server, no daemon touched, and it runs.
				PreConfig: func() {
					slurmdSince = onHost(t, l, "gpu01", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value")
				},
				Config: withCheck("v2").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.NoChange.String())),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("reasons"), wrote(gpus...)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkHealthCheckRan(l, gpus, "v2"),
					func(*terraform.State) error {
						if now := onHost(t, l, "gpu01", "systemctl show slurmd -p ActiveEnterTimestampMonotonic --value"); now != slurmdSince {
							return fmt.Errorf("slurmd on gpu01 restarted for a new health check program (active since %s, before %s)", now, slurmdSince)
						}
						return nil
					},
				),
			},
			{
				// Edited by hand on gpu02: the activation's plan shows it, and apply writes it back there.
				PreConfig: func() { onHost(t, l, "gpu02", "sed -i 's/v2/by-hand/' "+slurm.HealthCheckPath) },
				Config:    withCheck("v2").config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmActivationAddr, "status",
							regexp.MustCompile(`^activation pending \(none\): `+regexp.QuoteMeta(slurm.HealthCheckPath)+` differs on gpu02$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("reasons"), wrote("gpu02")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHosts(l, gpus, "tail -n 1 "+slurm.HealthCheckPath, "echo v2 $SLURMD_NODENAME > "+healthCheckMarker),
					checkHealthCheckRan(l, gpus, "v2"),
				),
			},
			{
				// Unset: the keys go, then the program on both servers.
				Config:           labCluster{computeNodes: gpus}.config(l),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.Reconfigure.String())),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "login01", "grep -ci '^HealthCheck' "+slurm.ConfDir+"/slurm.conf || true", "0"),
					checkOnHosts(l, gpus, "ls "+slurm.HealthCheckPath+" 2>/dev/null | wc -l", "0"),
				),
			},
			{
				// Set again, for destroy: each compute node's destroy removes it from its server.
				Config: withCheck("v3").config(l),
				Check:  checkHealthCheckRan(l, gpus, "v3"),
			},
		},
	})
}

// checkHealthCheckRan polls each node until the health check program with mark has run there:
// slurmd runs it at its start and whenever slurmctld asks, every interval.
func checkHealthCheckRan(l *lab.Lab, nodes []string, mark string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range nodes {
			want := mark + " " + n
			if err := pollLab(time.Minute, func() error {
				got, err := onHostErr(l, n, "cat "+healthCheckMarker+" 2>/dev/null || true")
				if err != nil {
					return err
				}
				if strings.TrimSpace(got) != want {
					return fmt.Errorf("%s on %s holds %q, want %q: slurmd has not run the health check program", healthCheckMarker, n, got, want)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}
}
