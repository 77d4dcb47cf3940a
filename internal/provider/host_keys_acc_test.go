package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

const nodeGPU01 = `
resource "gpucluster_node" "test" {
  name = "gpu01"
}`

// TestAccProvider_acceptNewHostKeys starts from a known_hosts file that does not exist: with
// accept_new_host_keys the first run records login01's and gpu01's keys, the ones the hosts
// really have, and a key changed in the file afterwards is refused, the file left as it was.
func TestAccProvider_acceptNewHostKeys(t *testing.T) {
	l := lab.Require(t)
	file := filepath.Join(t.TempDir(), "ssh", "known_hosts")
	config := strings.Replace(providerConfig(l, "  accept_new_host_keys = true\n"), l.KnownHostsPath, file, 1) + nodeGPU01
	gpu01, login01 := l.Host("gpu01"), l.Host("login01")
	wantLines := []string{
		gpu01.Address + "," + gpu01.Name + " " + labHostKey(t, l, "gpu01", "ssh-ed25519"),
		login01.Address + "," + login01.Name + " " + labHostKey(t, l, "login01", "ssh-ed25519"),
	}
	var tampered string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					data, err := os.ReadFile(file)
					if err != nil {
						return err
					}
					for _, want := range wantLines {
						if strings.Count(string(data), want+"\n") != 1 {
							return fmt.Errorf("%s holds\n%s\nwant the line %q once", file, data, want)
						}
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					data, err := os.ReadFile(file)
					if err != nil {
						t.Fatal(err)
					}
					tampered = strings.Replace(string(data), labHostKey(t, l, "gpu01", "ssh-ed25519"), labHostKey(t, l, "gpu02", "ssh-ed25519"), 1)
					if err := os.WriteFile(file, []byte(tampered), 0o600); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Host Key Verification Failed.*has changed`),
			},
			{
				PreConfig: func() {
					if data, err := os.ReadFile(file); err != nil || string(data) != tampered {
						t.Errorf("a refused key changed %s: %q (%v)", file, data, err)
					}
				},
				// Refresh-only with the real key restored, so the destroy can reach gpu01.
				Config:   providerConfig(l, "") + nodeGPU01,
				PlanOnly: true,
			},
		},
	})
}

// The line the unknown-host error shows is the one host_keys takes: pinned, it lets the
// provider in.
func TestAccProvider_unknownHostKeyLinePins(t *testing.T) {
	l := lab.Require(t)
	gpu01 := l.Host("gpu01")
	line := gpu01.Address + "," + gpu01.Name + " " + labHostKey(t, l, "gpu01", "ssh-ed25519")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      withHostKeys(t, l, []string{"login01"}) + nodeGPU01,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Unknown Host Key.*known_hosts_file or to host_keys:\s+` + regexp.QuoteMeta(line)),
			},
			{Config: withHostKeys(t, l, []string{"login01"}, line) + nodeGPU01},
		},
	})
}
