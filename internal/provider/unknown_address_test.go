package provider

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// An address that another resource only knows after apply, as when a cloud module creates the
// node: the plan shows it as unknown, skips host checks, and apply reaches the node.
func TestAccAddressKnownOnlyAtApply(t *testing.T) {
	l := lab.Require(t)
	const name, uid = "tacc_cloud", 1401
	gpu02 := l.Host("gpu02").Address
	config := fmt.Sprintf(`
resource "terraform_data" "gpu02" {
  input = %q
}

%s
resource "gpucluster_node" "test" {
  name    = "gpu02"
  address = terraform_data.gpu02.output
}

resource "gpucluster_user" "test" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = ["login01", terraform_data.gpu02.output]
}
`, gpu02, gpu02LaterProvider(l), name, uid)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, name, []string{"login01", "gpu02"}, ""),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("gpucluster_node.test", tfjsonpath.New("address")),
					plancheck.ExpectUnknownValue("gpucluster_user.test", tfjsonpath.New("node_status")),
				},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_node.test", tfjsonpath.New("hostname"), knownvalue.StringExact("gpu02")),
				statecheck.ExpectKnownValue("gpucluster_user.test", tfjsonpath.New("node_status"), allInSyncValue([]string{"login01", gpu02})),
			},
			Check: checkAccountOnHosts(l, name, []string{"login01", "gpu02"}, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, uid, name)),
		}},
	})
}

// With a node address known only at apply, the plan says in one warning which checks wait for
// apply, and the apply runs them before the resource changes the node: a firewall that would
// lock the provider out of gpu02 is refused then, and no host changes.
func TestAccAddressKnownOnlyAtApply_checksDeferred(t *testing.T) {
	l := lab.Require(t)
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "WARN")
	config := fmt.Sprintf(`
resource "terraform_data" "gpu02" {
  input = %q
}

%s
resource "gpucluster_firewall" "test" {
  node = "gpu02"
}
`, l.Host("gpu02").Address, gpu02LaterProvider(l))
	before := snapshotFirewalls(t, l)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() {
					for _, text := range []string{"Node Checks Deferred To Apply", "The provider settings node[1].address are known only after apply",
						"firewall lockout of the provider's own SSH connection"} {
						if err := checkLogHas(logFile, text); err != nil {
							t.Error(err)
						}
					}
				},
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Firewall Would Lock Out The Provider.*gpu02`),
			},
		},
	})
	if after := snapshotFirewalls(t, l); after != before {
		t.Errorf("the refused firewall changed a host:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// gpu02LaterProvider is the lab's provider block with gpu02's address taken from
// terraform_data.gpu02, which is known only after apply.
func gpu02LaterProvider(l *lab.Lab) string {
	return labProvider(l, fmt.Sprintf("  node {\n    name    = \"login01\"\n    address = %q\n  }\n"+
		"  node {\n    name    = \"gpu02\"\n    address = terraform_data.gpu02.output\n  }", l.Host("login01").Address))
}
