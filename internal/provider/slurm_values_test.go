package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// unknownController makes the controller known only at apply, so the Slurm resources' plans ask
// no host and what is refused here is refused by validation alone.
const unknownController = `
resource "terraform_data" "controller" {
  input = "login01"
}
`

func partitionBlock(attrs string) string {
	return `
resource "gpucluster_slurm_partition" "gpu" {
  controller = terraform_data.controller.output
  name       = "gpu"
  nodes      = ["gpu01"]
` + attrs + `
}
`
}

func slurmNodeBlock(attrs string) string {
	return `
resource "gpucluster_slurm_node" "gpu01" {
  controller = terraform_data.controller.output
  name       = "gpu01"
` + attrs + `
}
`
}

// Issue #11: values slurm.conf's syntax holds but slurmctld refuses when it reads them fail at
// plan, naming the attribute, before any host is asked.
func TestSlurmValuesRefusedAtPlan(t *testing.T) {
	cases := map[string]struct {
		config string
		want   *regexp.Regexp
	}{
		"max_time forever": {partitionBlock(`  max_time = "forever"`), diagPattern("Invalid Value", `max_time = "forever"`,
			"MaxTime=forever: not a time: Slurm reads a time as minutes, minutes:seconds, hours:minutes:seconds, days-hours")},
		"max_time in hours": {partitionBlock(`  max_time = "72h"`), diagPattern("Invalid Value", `max_time = "72h"`, "not a time")},
		"partition state UNKNOWN": {partitionBlock(`  state = "UNKNOWN"`), diagPattern("Invalid Value", `state = "UNKNOWN"`,
			"a partition line takes State UP, DOWN, DRAIN, INACTIVE")},
		"partition extra DefaultTime": {partitionBlock(`  extra = { DefaultTime = "1h" }`), diagPattern("Invalid Slurm Value", `extra = { DefaultTime = "1h" }`,
			"DefaultTime=1h: not a time", "No host was asked or changed")},
		"partition extra memory with a unit": {partitionBlock(`  extra = { MaxMemPerNode = "500G" }`), diagPattern("Invalid Slurm Value", "MaxMemPerNode",
			"MaxMemPerNode=500G: not a memory size: Slurm takes memory as a whole number of megabytes, without a unit (500G is 512000)")},
		"node state IDLE": {slurmNodeBlock(`  state = "IDLE"`), diagPattern("Invalid Value", `state = "IDLE"`,
			"a node line takes State CLOUD, DOWN, DRAIN, FAIL, FAILING, FUTURE, UNKNOWN", "write UNKNOWN")},
		"node extra TmpDisk": {slurmNodeBlock(`  extra = { TmpDisk = "1T" }`), diagPattern("Invalid Slurm Value", "TmpDisk", "TmpDisk=1T: not a memory size", "(1T is 1048576)")},
		"controller extra DefMemPerCPU": {`
resource "gpucluster_slurm_controller" "main" {
  node  = "login01"
  extra = { DefMemPerCPU = "4G" }
}
`, diagPattern("Invalid Slurm Value", `extra = { DefMemPerCPU = "4G" }`, "DefMemPerCPU=4G: not a memory size", "(4G is 4096)")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: offlineProvider + unknownController + tc.config, PlanOnly: true, ExpectError: tc.want}},
			})
		})
	}
}

// Every format slurm.conf(5) documents plans.
func TestSlurmValuesAcceptedAtPlan(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: unknownConnectionProvider + unknownController + partitionBlock(`  max_time = "3-00:00:00"
  state    = "up"
  extra    = { DefaultTime = "90", DefMemPerCPU = "4096", MaxMemPerNode = "UNLIMITED" }`) + slurmNodeBlock(`  state = "future"
  extra = { TmpDisk = "16384" }`) + `
resource "gpucluster_slurm_partition" "debug" {
  controller = terraform_data.controller.output
  name       = "debug"
  nodes      = ["gpu01"]
  max_time   = "UNLIMITED"
  extra      = { DefaultTime = "1-12:30" }
}

resource "gpucluster_slurm_controller" "main" {
  node  = "login01"
  extra = { PreemptExemptTime = "0:30:00", DefMemPerGPU = "120000" }
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}
