package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// TestAccUnreachableNodeReportedOnce points the provider at a port of login01 where nothing
// listens: every resource on login01, and on gpu01 behind it, fails, but login01's connection
// error is explained once and the other resources get a short error pointing to it. Nothing on
// any host changes.
func TestAccUnreachableNodeReportedOnce(t *testing.T) {
	l := lab.Require(t)
	login := l.Host("login01")
	block := fmt.Sprintf("    name    = %q\n    address = %q\n", login.Name, login.Address)
	config := strings.Replace(providerConfig(l, `  connect_timeout = "5s"`), block, block+"    port    = 2222\n", 1)
	if !strings.Contains(config, "port    = 2222") {
		t.Fatal("the test could not point login01 at port 2222")
	}
	for i := range 5 {
		config += firewallRuleBlock(fmt.Sprintf("login%d", i), "login01", fmt.Sprint(5611+i), "tcp", "any", "unreachable")
	}
	for i := range 2 {
		config += firewallRuleBlock(fmt.Sprintf("gpu%d", i), "gpu01", fmt.Sprint(5621+i), "tcp", "any", "unreachable")
	}
	before := snapshotFirewalls(t, l)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Cannot Connect To Node.*login01.*2222`),
			},
			{
				// Six short errors, one per other resource, and no second explanation.
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)^(?:[^C]|C[^a]|Ca[^n])*Cannot Connect To Node(?:[^C]|C[^a]|Ca[^n])*$`),
			},
			{
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)(Error: Node Unreachable.*){6}`),
			},
		},
	})
	if after := snapshotFirewalls(t, l); after != before {
		t.Errorf("a failed plan changed a host:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
