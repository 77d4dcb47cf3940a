package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// hostsUnchangedSince compares every lab node with a snapshot taken before a refused plan.
func hostsUnchangedSince(t *testing.T, l *lab.Lab, before *map[string]string) func() {
	return func() { compareSnapshots(t, *before, snapshotHosts(t, l)) }
}

// Issue #25: a login shell missing on a node was accepted, and the account could not log in
// there. The plan is refused, naming shell and each node that lacks it (gpu02's /etc/shells
// lists it, which the error says), for a new account and for a changed shell alike, and no host
// changes; a node that has the shell plans.
func TestAccUser_missingShellRefusedAtPlan(t *testing.T) {
	l := lab.Require(t)
	const name, uid, shell = "tacc_shell", 1170, "/usr/local/bin/tacc-sh"
	nodes := labNodeNames(l)
	onHost(t, l, "login01", "cp /bin/sh "+shell)
	onHost(t, l, "gpu02", "cp /etc/shells /etc/shells.tacc && echo "+shell+" >> /etc/shells")
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), "login01", "rm -f "+shell)
		_, _, _ = l.Exec(context.Background(), "gpu02", "mv /etc/shells.tacc /etc/shells")
	})
	var before map[string]string
	snapshot := func() { before = snapshotHosts(t, l) }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkUserGone(l, name, nodes, "login01"),
		Steps: []resource.TestStep{
			{
				PreConfig: snapshot,
				Config:    userConfig(l, name, uid, shell, nodes),
				ExpectError: diagPattern("Shell Not Found", fmt.Sprintf(`shell   = %q`, shell),
					"Login shell "+shell+" is not an executable file on node gpu01", "Install the shell on that node",
					"Error: Shell Not Found", "Login shell "+shell+" is not an executable file on node gpu02",
					"/etc/shells lists it"),
			},
			{
				PreConfig:          hostsUnchangedSince(t, l, &before),
				Config:             userConfig(l, name, uid, shell, []string{"login01"}),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: userConfig(l, name, uid, "/bin/bash", nodes)},
			{
				PreConfig:   snapshot,
				Config:      userConfig(l, name, uid, "/bin/nosuchshell", nodes),
				ExpectError: diagPattern("Shell Not Found", `shell   = "/bin/nosuchshell"`, "Login shell /bin/nosuchshell is not an executable file on node gpu01"),
			},
			{
				PreConfig: hostsUnchangedSince(t, l, &before),
				Config:    userConfig(l, name, uid, "/bin/bash", nodes),
				Check:     checkAccountOnHosts(l, name, nodes, fmt.Sprintf("%s:x:%d:100::/home/%s:/bin/bash", name, uid, name)),
			},
		},
	})
}
