package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// oldKernel is the release a "kernel upgrade" leaves the client module built for.
const oldKernel = "0.0.0-gpucluster-old"

// freshClientPackage reinstalls beegfs-client on host as a fresh node has it: the postinst's
// force-auto-build and no module, the service never started. The kernel headers and the
// autobuild configuration are put back when the test ends.
func freshClientPackage(t *testing.T, l *lab.Lab, host string) (release string) {
	t.Helper()
	onHost(t, l, host, "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall beegfs-client >/dev/null")
	t.Cleanup(func() {
		_, _ = onHostErr(l, host, "mkdir -p /lib/modules/$(uname -r)/build; rm -rf /lib/modules/"+oldKernel+
			"; sed -i 's/^buildEnabled=.*/buildEnabled=true/' "+beegfs.AutobuildConfPath)
	})
	return onHost(t, l, host, "uname -r")
}

// moveModuleToOldKernel plays a kernel upgrade: the node's module exists only for the
// release it ran before.
func moveModuleToOldKernel(t *testing.T, l *lab.Lab, host string) {
	t.Helper()
	onHost(t, l, host, "mkdir -p /lib/modules/"+oldKernel+"/updates/fs && mv /lib/modules/$(uname -r)/updates/fs/beegfs_autobuild /lib/modules/"+oldKernel+"/updates/fs/")
}

// activeSince is when systemd last started the client service.
const activeSince = "systemctl show -p ActiveEnterTimestampMonotonic --value beegfs-client"

// TestAccBeegfsClient_moduleBuiltBeforeFirstMount is issue #26 item 1 and the module half of
// the guide's Troubleshooting: on a fresh node the client's kernel module does not exist until
// the service's first start builds it, and the P9 check's staging mount runs before that.
// Without kernel headers the apply says so with the build's own line and changes nothing;
// with them it mounts. A module built only for another kernel shows in the plan and the apply
// rebuilds it without losing the mount when the build fails, and a no-op apply restarts nothing.
func TestAccBeegfsClient_moduleBuiltBeforeFirstMount(t *testing.T) {
	l := lab.Require(t)
	clients := []string{"login01"}
	prepareFreshBeegfs(t, l, clients)
	withoutServers(t, l, clients)
	release := freshClientPackage(t, l, "login01")
	module := "/lib/modules/" + release + "/updates/fs/beegfs_autobuild/beegfs.ko"
	config := beegfsClientConfig(l, true, "")
	var started string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// No linux-headers for the running kernel: the build's own error, nothing mounted.
				PreConfig:   func() { onHost(t, l, "login01", "rmdir /lib/modules/$(uname -r)/build") },
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)BeeGFS Client Module Not Built.*login01.*linux-headers-` + regexp.QuoteMeta(release) + `.*Linux kernel build directory not found`),
			},
			{
				PreConfig: func() {
					for _, c := range []struct{ script, want string }{
						{"mountpoint -q /home && echo mounted || echo local", "local"},
						{"systemctl is-enabled beegfs-client || true", "disabled"},
						{"test -e " + beegfs.ForceAutoBuildPath + " && echo asked", "asked"},
					} {
						if got := onHost(t, l, "login01", c.script); got != c.want {
							t.Fatalf("after the failed build: %s = %q, want %q", c.script, got, c.want)
						}
					}
					onHost(t, l, "login01", "mkdir /lib/modules/$(uname -r)/build")
				},
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMounted(l, "login01"),
					checkOnHost(l, "login01", "test -f "+module+" && lsmod | grep -c '^beegfs '", "1"),
					checkOnHost(l, "login01", "test -e "+beegfs.ForceAutoBuildPath+" && echo asked || echo built", "built"),
				),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A kernel upgrade whose build fails (buildEnabled=false): refused before the restart,
				// so /home stays mounted.
				PreConfig: func() {
					moveModuleToOldKernel(t, l, "login01")
					onHost(t, l, "login01", "sed -i 's/^buildEnabled=.*/buildEnabled=false/' "+beegfs.AutobuildConfPath)
					started = onHost(t, l, "login01", activeSince)
				},
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)BeeGFS Client Module Not Built.*login01.*buildEnabled=true`),
			},
			{
				PreConfig: func() {
					if got := onHost(t, l, "login01", activeSince+"; findmnt -n -o FSTYPE --mountpoint /home"); got != started+"\n"+labClientFSType {
						t.Fatalf("the failed build restarted the client or lost /home: %q", got)
					}
					onHost(t, l, "login01", "sed -i 's/^buildEnabled=.*/buildEnabled=true/' "+beegfs.AutobuildConfPath)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("gpucluster_beegfs_client.login01", plancheck.ResourceActionUpdate),
						expectPriorString("gpucluster_beegfs_client.login01", "status",
							regexp.MustCompile(`built for kernel `+oldKernel+`, not for the running kernel `+regexp.QuoteMeta(release))),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_beegfs_client.login01", tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMounted(l, "login01"),
					checkOnHost(l, "login01", "test -f "+module+" && echo rebuilt", "rebuilt"),
					func(*terraform.State) error {
						started = onHost(t, l, "login01", activeSince)
						return nil
					},
				),
			},
			{
				// Nothing to do: no build, no restart.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					if got := onHost(t, l, "login01", activeSince); got != started {
						t.Errorf("a no-op apply restarted beegfs-client (active since %s, was %s)", got, started)
					}
					if strings.TrimSpace(started) == "" {
						t.Error("beegfs-client has no start time")
					}
					return nil
				},
			},
		},
	})
}
