package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
)

func fakeMungeKeyConfig(c *fakeCluster, nodes []string, extra string) string {
	return c.provider("") + mungeKeyLifecycleBlock("login01", nodes, extra)
}

// TestMungeKey_fakeLifecycle is TestAccMungeKey_lifecycle on fake hosts without MUNGE: create
// installs it and spreads the controller's key, a node added in place restarts no other
// munged, import, rotation, a key replaced by hand, a mode changed by hand and munged stopped
// by hand each shown in the plan and repaired; destroy leaves MUNGE running.
func TestMungeKey_fakeLifecycle(t *testing.T) {
	c := newFakeCluster(t, "login01", "gpu01", "gpu02")
	all := c.names
	first := all[:2]
	sameID := statecheck.CompareValue(compare.ValuesSame())
	sameKey := statecheck.CompareValue(compare.ValuesSame())
	var adopted string
	var starts map[string]int
	keyOn := func(nodes []string) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("node_status"), allInSyncValue(nodes)),
			sameID.AddStateValue(mungeKeyAddr, tfjsonpath.New("id")),
			sameKey.AddStateValue(mungeKeyAddr, tfjsonpath.New("fingerprint")),
			c.stateLacksFile("login01", munge.KeyPath),
		}
	}
	rotated := `  rotation = "1"` + "\n"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             c.check(func() error { return c.mungeRunningWithOneKey(all) }),
		Steps: []resource.TestStep{
			{
				Config:            fakeMungeKeyConfig(c, first, ""),
				ConfigStateChecks: append(keyOn(first), statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("id"), knownvalue.StringExact("login01"))),
				Check: resource.ComposeAggregateTestCheckFunc(
					c.mungeKeyOn(first),
					c.mungeDecodes("login01", "gpu01"),
					func(s *terraform.State) error {
						adopted = s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]
						if c.host("gpu02").Installed(munge.Package) != "" {
							return fmt.Errorf("gpu02 is not in nodes but got MUNGE")
						}
						return nil
					},
				),
			},
			{
				PreConfig: func() { starts = c.mungeStarts(first) },
				Config:    fakeMungeKeyConfig(c, all, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: keyOn(all),
				Check: resource.ComposeAggregateTestCheckFunc(
					c.mungeKeyOn(all),
					c.mungeDecodes("login01", "gpu02"),
					c.check(func() error { return c.mungeRestarted(first, starts, false) }),
				),
			},
			{
				ResourceName:      mungeKeyAddr,
				ImportState:       true,
				ImportStateIdFunc: idInStateAt(mungeKeyAddr, "nodes"),
				ImportStateVerify: true,
			},
			{
				PreConfig: func() { starts = c.mungeStarts(all) },
				Config:    fakeMungeKeyConfig(c, all, rotated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(mungeKeyAddr, tfjsonpath.New("fingerprint")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(mungeKeyAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("fingerprint"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
					c.stateLacksFile("login01", munge.KeyPath),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					c.mungeKeyOn(all),
					func(s *terraform.State) error {
						if fp := s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]; fp == adopted {
							return fmt.Errorf("rotation kept the old key %s", fp)
						}
						return nil
					},
					c.check(func() error { return c.mungeRestarted(all, starts, true) }),
					c.mungeDecodes("gpu02", "gpu01"),
				),
			},
			{
				PreConfig: func() {
					c.run("gpu02", "mungekey --create --force --keyfile "+munge.KeyPath+" && chown munge:munge "+munge.KeyPath+" && chmod 0400 "+munge.KeyPath)
				},
				Config: fakeMungeKeyConfig(c, all, rotated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate),
						expectBefore(mungeKeyAddr, "node_status", "gpu02", "different key on gpu02"),
						expectBefore(mungeKeyAddr, "node_status", "gpu01", inSync),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(c.mungeKeyOn(all), c.mungeDecodes("login01", "gpu02")),
			},
			{
				PreConfig: func() { c.run("gpu01", "chmod 0644 "+munge.KeyPath) },
				Config:    fakeMungeKeyConfig(c, all, rotated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectBefore(mungeKeyAddr, "node_status", "gpu01", "mode 0644 on gpu01, want 0400")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: c.mungeKeyOn(all),
			},
			{
				PreConfig: func() { c.run("gpu02", "systemctl disable --now --quiet munge") },
				Config:    fakeMungeKeyConfig(c, all, rotated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectBefore(mungeKeyAddr, "node_status", "gpu02", "munge not running on gpu02")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					c.check(func() error {
						if u := c.host("gpu02").Units.Get("munge"); !u.Active || !u.Enabled {
							return fmt.Errorf("gpu02: munge is %+v, want active and enabled", u)
						}
						return nil
					}),
					c.mungeDecodes("login01", "gpu02"),
				),
			},
		},
	})
}

// mungeKeyOn checks that each node holds the state's key, munge:munge 0400, with munged running.
func (c *fakeCluster) mungeKeyOn(nodes []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		want := s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]
		for _, n := range nodes {
			got := c.host(n).Run("echo $(sha256sum < " + munge.KeyPath + " | cut -d' ' -f1) $(stat -c '%U:%G %a' " + munge.KeyPath + ") $(systemctl is-active munge)")
			if w := want + " munge:munge 400 active\n"; got.Stdout != w {
				return fmt.Errorf("%s: key %q, want %q", n, got.Stdout, w)
			}
		}
		return nil
	}
}

// mungeDecodes is the guide's check: a credential made on one node decodes on another.
func (c *fakeCluster) mungeDecodes(from, to string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cred := c.host(from).Run("munge -n")
		if cred.Status != 0 {
			return fmt.Errorf("%s: munge -n: %s", from, cred.Stderr)
		}
		out := c.host(to).Run("printf '%s\\n' '" + strings.TrimSpace(cred.Stdout) + "' | unmunge")
		if out.Status != 0 || !strings.Contains(out.Stdout, "STATUS:          Success (0)") {
			return fmt.Errorf("a credential made on %s does not decode on %s: %s%s", from, to, out.Stdout, out.Stderr)
		}
		return nil
	}
}

func (c *fakeCluster) mungeStarts(nodes []string) map[string]int {
	starts := map[string]int{}
	for _, n := range nodes {
		starts[n] = c.host(n).Units.Get("munge").Starts
	}
	return starts
}

func (c *fakeCluster) mungeRestarted(nodes []string, before map[string]int, want bool) error {
	for _, n := range nodes {
		if after := c.host(n).Units.Get("munge").Starts; (after != before[n]) != want {
			return fmt.Errorf("%s: munged started %d times, %d before; restarted want %v", n, after, before[n], want)
		}
	}
	return nil
}

// mungeRunningWithOneKey is the CheckDestroy: destroy leaves munged running with one key.
func (c *fakeCluster) mungeRunningWithOneKey(nodes []string) error {
	sums := map[string]bool{}
	for _, n := range nodes {
		key, err := c.host(n).FS.ReadFile(munge.KeyPath)
		if err != nil {
			return fmt.Errorf("%s: no MUNGE key after destroy: %w", n, err)
		}
		if !c.host(n).Units.Get("munge").Active {
			return fmt.Errorf("%s: munge is not running after destroy", n)
		}
		sum := sha256.Sum256(key)
		sums[hex.EncodeToString(sum[:])] = true
	}
	if len(sums) != 1 {
		return fmt.Errorf("after destroy the nodes hold %d different keys", len(sums))
	}
	return nil
}

// stateLacksFile is a state check that no encoding of the file on node (the MUNGE key) is in
// the state, while its fingerprint is.
func (c *fakeCluster) stateLacksFile(node, file string) statecheck.StateCheck {
	return fakeStateLacks{c: c, node: node, file: file}
}

type fakeStateLacks struct {
	c          *fakeCluster
	node, file string
}

func (f fakeStateLacks) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	raw, err := json.Marshal(req.State)
	if err != nil {
		resp.Error = err
		return
	}
	key, err := f.c.host(f.node).FS.ReadFile(f.file)
	if err != nil {
		resp.Error = err
		return
	}
	forms, err := secretForms(f.file, key)
	if err != nil {
		resp.Error = err
		return
	}
	for _, form := range forms {
		if strings.Contains(string(raw), form.text) {
			resp.Error = fmt.Errorf("%s on %s appears in the Terraform state (%s)", f.file, f.node, form.form)
			return
		}
	}
	sum := sha256.Sum256(key)
	if !strings.Contains(string(raw), hex.EncodeToString(sum[:])) {
		resp.Error = fmt.Errorf("the state lacks the fingerprint of %s on %s", f.file, f.node)
	}
}
