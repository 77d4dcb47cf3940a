package provider

import (
	"fmt"
	"path/filepath"
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

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

const mungeKeyAddr = "gpucluster_munge_key.test"

func mungeKeyConfig(l *lab.Lab, controller string, nodes []string, extra string) string {
	return providerConfig(l, "") + mungeKeyLifecycleBlock(controller, nodes, extra)
}

// mungeKeyLifecycleBlock is the key the lifecycle tests manage, on the lab and on fake hosts; extra holds
// more attribute lines.
func mungeKeyLifecycleBlock(controller string, nodes []string, extra string) string {
	return fmt.Sprintf(`
resource "gpucluster_munge_key" "test" {
  controller = %q
  nodes      = %s
%s}
`, controller, hclList(nodes), extra)
}

// TestAccMungeKey_lifecycle adopts the lab's key, grows to a third node in place, imports,
// rotates, repairs a key replaced by hand, and proves the key never reaches state or logs.
// It leaves munged running with one key on every node, as the other tests need.
func TestAccMungeKey_lifecycle(t *testing.T) {
	l := lab.Require(t)
	all := labNodeNames(l)
	first := all[:2]
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "TRACE")
	// The lab starts without MUNGE; another test may have installed it already. Either way
	// the controller's key after create must be the one a key existing before it was.
	existing := onHost(t, l, "login01", "if [ -e "+munge.KeyPath+" ]; then sha256sum < "+munge.KeyPath+" | cut -d' ' -f1; fi")
	var adopted string
	keys := &secretWatch{what: "the MUNGE key", resourceType: "gpucluster_munge_key", files: []string{munge.KeyPath}}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	sameKey := statecheck.CompareValue(compare.ValuesSame())
	var restartedAt map[string]string
	// The resource keeps its ID and its key, in sync on nodes, and the key stays out of state.
	oneKeyOn := func(nodes []string) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("node_status"), allInSyncValue(nodes)),
			sameID.AddStateValue(mungeKeyAddr, tfjsonpath.New("id")),
			sameKey.AddStateValue(mungeKeyAddr, tfjsonpath.New("fingerprint")),
			keys.stateLacks(l),
		}
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMungeStillRunning(l, all),
		Steps: []resource.TestStep{
			{
				Config: mungeKeyConfig(l, "login01", first, ""),
				ConfigStateChecks: append(oneKeyOn(first),
					statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("id"), knownvalue.StringExact("login01"))),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkKeyOnNodes(l, first),
					checkDecodes(l, "login01", "gpu01"),
					func(s *terraform.State) error {
						// An existing cluster key is adopted, never silently replaced.
						adopted = s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]
						if existing != "" && adopted != existing {
							return fmt.Errorf("login01 had key %s before create; the resource holds %s", existing, adopted)
						}
						return nil
					},
				),
			},
			{
				// Adding a node copies the key there; munged elsewhere keeps running undisturbed.
				PreConfig: func() { restartedAt = mungeStartTimes(t, l, first) },
				Config:    mungeKeyConfig(l, "login01", all, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: oneKeyOn(all),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkKeyOnNodes(l, all),
					checkDecodes(l, "login01", "gpu02"),
					func(*terraform.State) error { return checkRestarted(l, first, restartedAt, false) },
				),
			},
			{
				ResourceName:      mungeKeyAddr,
				ImportState:       true,
				ImportStateIdFunc: idInStateAt(mungeKeyAddr, "nodes"),
				ImportStateVerify: true,
			},
			{
				PreConfig: func() { restartedAt = mungeStartTimes(t, l, all) },
				Config:    mungeKeyConfig(l, "login01", all, `  rotation = "1"`+"\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(mungeKeyAddr, tfjsonpath.New("fingerprint")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(mungeKeyAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("fingerprint"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
					keys.stateLacks(l),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkKeyOnNodes(l, all),
					func(s *terraform.State) error {
						if fp := s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]; fp == adopted {
							return fmt.Errorf("rotation kept the old key %s", fp)
						}
						return nil
					},
					func(*terraform.State) error { return checkRestarted(l, all, restartedAt, true) },
					checkDecodes(l, "login01", "gpu02"),
					checkDecodes(l, "gpu02", "gpu01"),
				),
			},
			{
				// A key replaced by hand on one node: the plan names it, apply puts the
				// controller's key back and restarts munged there.
				PreConfig: func() {
					onHost(t, l, "gpu02", "dd if=/dev/urandom of="+munge.KeyPath+" bs=128 count=1 status=none && chown munge:munge "+munge.KeyPath+" && chmod 0400 "+munge.KeyPath)
				},
				Config: mungeKeyConfig(l, "login01", all, `  rotation = "1"`+"\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate),
						expectBefore(mungeKeyAddr, "node_status", "gpu02", "different key on gpu02"),
						expectBefore(mungeKeyAddr, "node_status", "gpu01", inSync),
						plancheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("node_status"), allInSyncValue(all)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{keys.stateLacks(l)},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkKeyOnNodes(l, all),
					checkDecodes(l, "login01", "gpu02"),
				),
			},
			{
				PreConfig: func() { onHost(t, l, "gpu01", "chmod 0644 "+munge.KeyPath) },
				Config:    mungeKeyConfig(l, "login01", all, `  rotation = "1"`+"\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectBefore(mungeKeyAddr, "node_status", "gpu01", "mode 0644 on gpu01, want 0400"),
					},
				},
				Check: checkKeyOnNodes(l, all),
			},
			{
				// munged stopped and disabled by hand: the restart that brings it back enables it
				// at boot again (it enables only a unit that is not enabled).
				PreConfig: func() { onHost(t, l, "gpu02", "systemctl disable --now --quiet munge") },
				Config:    mungeKeyConfig(l, "login01", all, `  rotation = "1"`+"\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "gpu02", "systemctl is-active munge; systemctl is-enabled munge", "active\nenabled"),
					checkDecodes(l, "login01", "gpu02"),
				),
			},
			{
				Config:   mungeKeyConfig(l, "login01", all, `  rotation = "1"`+"\n"),
				PlanOnly: true,
			},
		},
	})
	keys.checkLog(t, logFile)
}

func TestChooseKey(t *testing.T) {
	const old, rotated, byHand = "aaaa", "bbbb", "cccc"
	tests := []struct {
		name    string
		current string
		in      keyInputs
		want    keySource
		wantErr string
	}{
		{"create adopts the controller's key", old, keyInputs{}, useControllerKey, ""},
		{"create on a bare controller generates", "", keyInputs{}, generateNewKey, ""},
		{"update spreads the planned key", old, keyInputs{inState: old, planned: old}, useControllerKey, ""},
		{"rotation generates while the controller holds the state's key", old, keyInputs{rotationChanged: true, inState: old}, generateNewKey, ""},
		{"retried rotation spreads the key the failed apply left", rotated, keyInputs{rotationChanged: true, inState: old}, useControllerKey, ""},
		{"rotation on a controller without key generates", "", keyInputs{rotationChanged: true, inState: old}, generateNewKey, ""},
		{"key replaced after the refresh stops the apply", byHand, keyInputs{inState: old, planned: old}, useControllerKey, "holds the key with sha256 cccc; the plan was made for the key with sha256 aaaa"},
		{"key removed after the refresh stops the apply", "", keyInputs{inState: old, planned: old}, useControllerKey, "holds no key; the plan was made for the key with sha256 aaaa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chooseKey(tt.current, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestAccMungeKey_failedRotationRetry makes a rotation fail on gpu02 (munged there refuses to
// start) and proves the retry copies the key the controller got instead of generating another.
func TestAccMungeKey_failedRotationRetry(t *testing.T) {
	l := lab.Require(t)
	all := labNodeNames(l)
	const dropIn = "/etc/systemd/system/munge.service.d/zz-gpucluster-test-fail.conf"
	unbreak := "rm -f " + dropIn + " && systemctl daemon-reload"
	// Should the test stop half-way, munged on gpu02 is started again for the tests after it.
	t.Cleanup(func() { onHost(t, l, "gpu02", unbreak+" && systemctl restart munge") })
	var afterFailure string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMungeStillRunning(l, all),
		Steps: []resource.TestStep{
			{Config: mungeKeyConfig(l, "login01", all, `  rotation = "a"`+"\n")},
			{
				PreConfig: func() {
					onHost(t, l, "gpu02", "mkdir -p "+filepath.Dir(dropIn)+" && printf '[Service]\\nExecStartPre=/bin/false\\n' > "+dropIn+" && systemctl daemon-reload")
				},
				Config:      mungeKeyConfig(l, "login01", all, `  rotation = "b"`+"\n"),
				ExpectError: regexp.MustCompile(`(?s)Cannot Install MUNGE Key.*gpu02`),
			},
			{
				PreConfig: func() {
					afterFailure = onHost(t, l, "login01", "sha256sum < "+munge.KeyPath+" | cut -d' ' -f1")
					onHost(t, l, "gpu02", unbreak)
				},
				Config: mungeKeyConfig(l, "login01", all, `  rotation = "b"`+"\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(mungeKeyAddr, plancheck.ResourceActionUpdate),
						expectBefore(mungeKeyAddr, "node_status", "gpu02", "munge not running on gpu02"),
						plancheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("fingerprint"), knownvalue.NotNull()),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						if fp := s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]; fp != afterFailure {
							return fmt.Errorf("the retry installed key %s; want %s, the one the failed rotation left on login01", fp, afterFailure)
						}
						return nil
					},
					checkKeyOnNodes(l, all),
					checkDecodes(l, "login01", "gpu02"),
				),
			},
		},
	})
}

func TestAccMungeKey_badInput(t *testing.T) {
	l := lab.Require(t)
	before := mungeSnapshot(t, l)
	cases := map[string]struct {
		config string
		want   string
	}{
		"unreachable controller": {mungeKeyConfig(l, "10.0.0.99", []string{"10.0.0.99", "gpu01"}, ""),
			`(?s)Cannot Connect To Node.*controller\s*=\s*"10\.0\.0\.99"`},
		"unreachable node": {mungeKeyConfig(l, "login01", []string{"login01", "10.0.0.99"}, ""),
			`(?s)Cannot Connect To Node.*nodes\s*=.*10\.0\.0\.99`},
	}
	expectRefused(t, cases)
	if after := mungeSnapshot(t, l); after != before {
		t.Errorf("bad input changed MUNGE on a host:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestAccMungeKey_stopOnDestroy stops munged on destroy when asked, and only then; the key
// stays. It uses gpu02 alone and starts munged there again afterwards.
func TestAccMungeKey_stopOnDestroy(t *testing.T) {
	l := lab.Require(t)
	t.Cleanup(func() {
		onHost(t, l, "gpu02", "systemctl enable --now munge && for i in $(seq 50); do munge -n >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1")
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			got, err := onHostErr(l, "gpu02", "systemctl is-active munge; systemctl is-enabled munge; test -e "+munge.KeyPath+" && echo key; true")
			if err != nil {
				return err
			}
			if want := "inactive\ndisabled\nkey"; got != want {
				return fmt.Errorf("gpu02 after destroy with stop_on_destroy: %q, want %q (stopped, disabled, key kept)", got, want)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: mungeKeyConfig(l, "gpu02", []string{"gpu02"}, "  stop_on_destroy = true\n"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(mungeKeyAddr, tfjsonpath.New("node_status"), allInSyncValue([]string{"gpu02"})),
			},
		}},
	})
}

// checkKeyOnNodes reads the key's checksum, owner and mode on each node through the lab,
// not the provider: the same key everywhere, the one the state names, installed as the guide says.
func checkKeyOnNodes(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		want := s.RootModule().Resources[mungeKeyAddr].Primary.Attributes["fingerprint"]
		for _, n := range nodes {
			got, err := onHostErr(l, n, "echo $(sha256sum < "+munge.KeyPath+" | cut -d' ' -f1) $(stat -c '%U:%G %a' "+munge.KeyPath+") $(systemctl is-active munge)")
			if err != nil {
				return err
			}
			if w := want + " munge:munge 400 active"; got != w {
				return fmt.Errorf("%s: key %q, want %q", n, got, w)
			}
		}
		return nil
	}
}

// checkDecodes is the guide's check: a credential made on one node decodes on another.
func checkDecodes(l *lab.Lab, from, to string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cred, err := onHostErr(l, from, "munge -n")
		if err != nil {
			return err
		}
		out, err := onHostErr(l, to, "printf '%s\\n' "+transport.Quote(cred)+" | unmunge")
		if err != nil {
			return fmt.Errorf("a credential made on %s does not decode on %s: %w", from, to, err)
		}
		if !strings.Contains(out, "STATUS:          Success (0)") {
			return fmt.Errorf("unmunge on %s: %s", to, out)
		}
		return nil
	}
}

func mungeStartTimes(t *testing.T, l *lab.Lab, nodes []string) map[string]string {
	times := map[string]string{}
	for _, n := range nodes {
		times[n] = onHost(t, l, n, "systemctl show munge -p ActiveEnterTimestampMonotonic --value")
	}
	return times
}

// checkRestarted compares munged's start times with before: changed on every node when
// want, unchanged on every node otherwise.
func checkRestarted(l *lab.Lab, nodes []string, before map[string]string, want bool) error {
	for _, n := range nodes {
		after, err := onHostErr(l, n, "systemctl show munge -p ActiveEnterTimestampMonotonic --value")
		if err != nil {
			return err
		}
		if restarted := after != before[n]; restarted != want {
			return fmt.Errorf("%s: munged restarted = %v (start time %s -> %s), want %v", n, restarted, before[n], after, want)
		}
	}
	return nil
}

// checkMungeStillRunning is the CheckDestroy: destroy leaves munged running with one key on
// every node, because Slurm and the other tests depend on it.
func checkMungeStillRunning(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		sums := map[string]bool{}
		for _, n := range nodes {
			got, err := onHostErr(l, n, "systemctl is-active munge && sha256sum < "+munge.KeyPath)
			if err != nil {
				return fmt.Errorf("%s: munge is not running with a key after destroy: %w", n, err)
			}
			sums[strings.Fields(got)[1]] = true
		}
		if len(sums) != 1 {
			return fmt.Errorf("after destroy the nodes hold %d different keys", len(sums))
		}
		return nil
	}
}

func mungeSnapshot(t *testing.T, l *lab.Lab) string {
	var b strings.Builder
	for _, n := range labNodeNames(l) {
		fmt.Fprintf(&b, "%s: %s\n", n, onHost(t, l, n, "sha256sum < "+munge.KeyPath+"; stat -c '%U:%G %a' "+munge.KeyPath+"; systemctl show munge -p ActiveEnterTimestampMonotonic --value"))
	}
	return b.String()
}

// The timeouts block bounds the waits: a create given no time at all stops at its first step
// with the deadline named, and nothing is installed.
func TestAccMungeKey_timeout(t *testing.T) {
	l := lab.Require(t)
	before := onHost(t, l, "gpu02", "sha256sum /etc/munge/munge.key 2>/dev/null || echo none")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      mungeKeyConfig(l, "login01", labNodeNames(l), "  timeouts {\n    create = \"1ns\"\n  }\n"),
			ExpectError: regexp.MustCompile(`context deadline exceeded`),
		}},
	})
	if after := onHost(t, l, "gpu02", "sha256sum /etc/munge/munge.key 2>/dev/null || echo none"); after != before {
		t.Errorf("gpu02's key changed from %q to %q although the create timed out at once", before, after)
	}
}
