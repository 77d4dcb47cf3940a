package provider

import (
	"fmt"
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

provider "gpucluster" {
  user             = %q
  private_key_file = %q
  known_hosts_file = %q
  sudo_password    = %q
  login_node       = "login01"
  node {
    name    = "login01"
    address = %q
  }
  node {
    name    = "gpu02"
    address = terraform_data.gpu02.output
  }
}

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
`, gpu02, l.AdminUser, l.AdminKeyPath, l.KnownHostsPath, l.AdminPassword, l.Host("login01").Address, name, uid)

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
