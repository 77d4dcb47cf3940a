package provider

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// beegfsOnLogin runs the beegfs command on login01 against its management service, as the
// guide's verification does.
func beegfsOnLogin(l *lab.Lab, args string) (string, error) {
	return onHostErr(l, lab.LoginHost, beegfs.CLIPath+" "+args+" --mgmtd-addr login01:"+fmt.Sprint(beegfs.MgmtdAPIPort)+" 2>&1")
}

// eventually retries check until it passes or the daemons' heartbeats have had time to
// arrive.
func eventually(check resource.TestCheckFunc) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			if err = check(s); err == nil {
				return nil
			}
		}
		return err
	}
}

// checkRegistered: `beegfs target list` and `beegfs node list` on login01 show exactly these
// storage targets and meta and storage nodes, by their short IDs (s:101, m:2).
func checkRegistered(l *lab.Lab, targets, nodes []string) resource.TestCheckFunc {
	return eventually(func(*terraform.State) error {
		for _, c := range []struct {
			cmd  string
			want []string
		}{{"target list --node-type storage", targets}, {"node list", nodes}} {
			out, err := beegfsOnLogin(l, c.cmd)
			if err != nil {
				return fmt.Errorf("beegfs %s: %w", c.cmd, err)
			}
			var got []string
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) > 0 && (strings.HasPrefix(f[0], "s:") || strings.HasPrefix(f[0], "m:")) {
					got = append(got, f[0])
				}
			}
			// The management service lists targets in registration order.
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				return fmt.Errorf("beegfs %s on login01 shows %v, want %v:\n%s", c.cmd, got, c.want, out)
			}
		}
		return nil
	})
}

// freshMgmtdDB gives the test a management database of its own: the database survives a
// destroy, and a storage directory set up again gets a new registration token, which an old
// database would refuse, as the real management service does.
func freshMgmtdDB(t *testing.T, l *lab.Lab) {
	t.Helper()
	reset := "systemctl stop " + beegfs.ServiceMgmtd + " 2>/dev/null; rm -f " + labDBFile + "; true"
	onHost(t, l, lab.LoginHost, reset)
	t.Cleanup(func() { onHost(t, l, lab.LoginHost, reset) })
}

// Destroying a target deletes it from the management service, with a host's last target the
// storage node too, and destroying a metadata service its node, so the guide's health check
// passes afterwards.
func TestAccBeegfsTarget_destroyDeregisters(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, lab.LoginHost, "beegfs-mgmtd", "beegfs-meta", beegfs.CLIPackage)
	freshMgmtdDB(t, l)
	prepareStorageHost(t, l, "gpu01")
	prepareStorageHost(t, l, "gpu02")
	// A second metadata service, on gpu01's disk: the first holds the root directory.
	onHost(t, l, "gpu01", "cp -a "+beegfs.MetaConfPath+" /root/beegfs-meta.conf.tacc")
	t.Cleanup(func() {
		onHost(t, l, "gpu01", "systemctl disable --now beegfs-meta 2>/dev/null; rm -rf /data/beegfs-meta /etc/systemd/system/beegfs-meta.service.d; "+
			"systemctl daemon-reload; cp /root/beegfs-meta.conf.tacc "+beegfs.MetaConfPath)
	})
	secondMeta := fmt.Sprintf(`
resource "gpucluster_beegfs_metadata" "gpu01" {
  node        = "gpu01"
  path        = "/data/beegfs-meta"
  node_num_id = 2
  mgmtd_host  = %q
  depends_on  = [gpucluster_beegfs_metadata.cluster]
}
`, l.Host(lab.LoginHost).Address)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: beegfsCluster{storage: []string{"gpu01", "gpu02"}, extra: secondMeta}.config(l),
				Check:  checkRegistered(l, []string{"s:101", "s:201"}, []string{"m:1", "m:2", "s:1", "s:2"}),
			},
			{
				// The root directory's metadata node stays: the management service keeps it.
				Config: beegfsCluster{storage: []string{"gpu01"}}.config(l),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRegistered(l, []string{"s:101"}, []string{"m:1", "s:1"}),
					func(*terraform.State) error {
						if out, err := beegfsOnLogin(l, "health check"); err != nil {
							return fmt.Errorf("the guide's health check fails after the destroy: %w\n%s", err, out)
						}
						return nil
					},
				),
			},
		},
	})
}

// gpucluster_cluster_check runs the guide's `beegfs health check`: it passes on a healthy
// BeeGFS, and names the failing check, in the command's words, once a storage service has
// been down longer than the management service's node-offline-timeout.
func TestAccClusterCheck_beegfsHealth(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, lab.LoginHost, "beegfs-mgmtd", "beegfs-meta", beegfs.CLIPackage)
	freshMgmtdDB(t, l)
	prepareStorageHost(t, l, "gpu01")
	// Heartbeats come every few seconds: a timeout of 20 s keeps a live target Online.
	onHost(t, l, lab.LoginHost, "cp -a "+beegfs.MgmtdTOMLPath+" /root/beegfs-mgmtd.toml.tacc")
	t.Cleanup(func() { onHost(t, l, lab.LoginHost, "cp /root/beegfs-mgmtd.toml.tacc "+beegfs.MgmtdTOMLPath) })
	cluster := beegfsCluster{storage: []string{"gpu01"}}.config(l)
	check := func(dependsOn string, failOnProblems bool) string {
		return cluster + fmt.Sprintf(`
data "gpucluster_cluster_check" "test" {
  controller        = "login01"
  nodes             = ["login01"]
  beegfs_mgmtd_host = "login01"
  fail_on_problems  = %t
  %s
}
`, failOnProblems, dependsOn)
	}
	const ds = "data.gpucluster_cluster_check.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					onHost(t, l, lab.LoginHost, `printf 'node-offline-timeout = "20s"\n' >> `+beegfs.MgmtdTOMLPath)
				},
				Config: check("depends_on = [gpucluster_beegfs_target.gpu01]", false),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("beegfs_healthy"), knownvalue.Bool(true)),
				},
				Check: func(s *terraform.State) error {
					for k, v := range s.RootModule().Resources[ds].Primary.Attributes {
						if strings.HasPrefix(k, "problems.") && strings.Contains(v, "beegfs health check") {
							return fmt.Errorf("a healthy BeeGFS reported %s", v)
						}
					}
					return nil
				},
			},
			{
				// Read at plan time, before an apply could start the service again.
				PreConfig: func() {
					onHost(t, l, "gpu01", "systemctl stop beegfs-storage")
					time.Sleep(25 * time.Second)
				},
				Config:      check("", true),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Cluster Check Failed.*` + wrapped("beegfs health check on login01: 🛑 Reachability -> Not all targets are responding.")),
			},
		},
	})
}
