package provider

import (
	"context"
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

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

const slurmControllerAddr = "gpucluster_slurm_controller.test"

// TestAccSlurmController_lifecycle creates the controller with the guide's settings, imports
// it, changes a setting with a reconfigure (slurmctld keeps running) and one that needs a
// restart (it restarts), repairs a hand edit of slurm.conf, and proves the real slurmctld
// refuses GPU TRES without slurmdbd (P2) as the plan-time check says.
func TestAccSlurmController_lifecycle(t *testing.T) {
	l := lab.Require(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	var activeSince string
	gen := labSlurm(l)
	config := func(extra string) string { return slurmControllerConfig(l, extra) + slurmActivationConfig() }
	const port = `  scheduler_type = "sched/builtin"` + "\n  slurmctld_port = 6820\n"

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkControllerDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config: config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("id"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("slurmctld_host"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("version"), knownvalue.StringRegexp(regexp.MustCompile(`^`+regexp.QuoteMeta(gen.series)+`\.\d+$`))),
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(slurmControllerAddr, tfjsonpath.New("cgroup").AtMapKey("constrain_devices"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.RestartController.String())),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("config_sha256"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
					sameID.AddStateValue(slurmControllerAddr, tfjsonpath.New("id")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "ClusterName=cluster", "SlurmctldHost=login01", "SlurmUser=slurm", "AuthType=auth/munge", "CredType=cred/munge",
						"StateSaveLocation=/var/spool/slurmctld", "SlurmdSpoolDir=/var/spool/slurmd", "SlurmctldPort=6817", "SlurmdPort=6818",
						"SrunPortRange=60001-61000", "SlurmctldParameters=enable_configless,reconfig_on_restart", "SchedulerType=sched/backfill",
						"EnforcePartLimits=ANY", "ReturnToService=2", "GresTypes=gpu", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
						"ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none"),
					checkFileLines(l, slurm.ConfDir+"/cgroup.conf", "CgroupPlugin="+gen.cgroupPlugin, "ConstrainCores=yes", "ConstrainDevices=yes", "ConstrainRAMSpace=no"),
					checkPing(l),
				),
			},
			{
				ResourceName:                         slurmControllerAddr,
				ImportState:                          true,
				ImportStateIdFunc:                    idInState(slurmControllerAddr),
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "node",
			},
			{
				// An import reads what is pending; what the last activation did is not on the host.
				ResourceName:                         slurmActivationAddr,
				ImportState:                          true,
				ImportStateIdFunc:                    idInState(slurmActivationAddr),
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "controller",
				ImportStateVerifyIgnore:              []string{"change_class", "reasons"},
			},
			{
				// P2: the daemon itself refuses what the plan refuses.
				PreConfig: func() { checkDaemonRefusesGPUTRES(t, l) },
				Config:    config(`  extra = { AccountingStorageTRES = "gres/gpu" }` + "\n"),
				PlanOnly:  true,
				ExpectError: regexp.MustCompile(`(?s)GPU Accounting Needs Slurmdbd.*AccountingStorageType=accounting_storage/slurmdbd.*` +
					`slurmdbd\s+is\s+required\s+to\s+run\s+with\s+TRES\s+gres/gpu`),
			},
			{
				// A setting the installed Slurm does not know is refused at plan time, naming its version.
				Config:      config(fmt.Sprintf("  extra = { %s = %q }\n", gen.unknownKey, gen.unknownValue)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Slurm Configuration Refused.*` + gen.refusal),
			},
			{
				// slurmctld stopped by hand: the refresh shows an activation pending, apply starts it again.
				PreConfig: func() { onHost(t, l, "login01", "systemctl stop slurmctld") },
				Config:    config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmActivationAddr, "status", regexp.MustCompile(`^activation pending \(restart of slurmctld\): slurmctld does not run$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkPing(l),
			},
			{
				// A scheduler change is a reconfigure: slurmctld is not restarted.
				PreConfig: func() { activeSince = slurmctldActiveSince(t, l) },
				Config:    config(`  scheduler_type = "sched/builtin"` + "\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(slurmActivationAddr, tfjsonpath.New("change_class")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(slurmControllerAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.Reconfigure.String())),
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("reasons"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("SchedulerType changed")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "SchedulerType=sched/builtin"),
					checkPing(l),
					func(*terraform.State) error { return checkActiveSince(l, activeSince, false) },
				),
			},
			{
				// A port change needs a restart of slurmctld, and gets one.
				PreConfig: func() { activeSince = slurmctldActiveSince(t, l) },
				Config:    config(port),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.RestartController.String())),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "SlurmctldPort=6820"),
					checkPing(l),
					func(*terraform.State) error { return checkActiveSince(l, activeSince, true) },
				),
			},
			{
				// slurm.conf edited by hand: the refresh names the setting, apply puts it back.
				PreConfig: func() {
					onHost(t, l, "login01", "sed -i 's|^SchedulerType=.*|SchedulerType=sched/backfill|' "+slurm.ConfDir+"/slurm.conf")
				},
				Config: config(port),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmActivationAddr, "status", regexp.MustCompile(`^activation pending \(reconfigure\): SchedulerType changed$`)),
						plancheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkSlurmConf(l, "SchedulerType=sched/builtin"), checkPing(l)),
			},
			{
				// The real slurmctld refuses to start: a state directory it cannot write passes
				// every check before the restart. The activation restores the previous files,
				// restarts slurmctld with them and quotes its own log.
				PreConfig: func() { onHost(t, l, "login01", "install -d -m 0700 -o root -g root "+unwritableStateDir) },
				Config:    config(port + "  state_save_location = \"" + unwritableStateDir + "\"\n"),
				ExpectError: regexp.MustCompile(`(?s)Cannot Activate Slurm Configuration.*previous\s+files\s+were\s+restored\s+and\s+slurmctld\s+runs\s+with\s+them\s+again.*` +
					`slurmctld's\s+log:.*fatal:\s+Incorrect\s+permissions\s+on\s+state\s+save\s+loc:\s+` + regexp.QuoteMeta(unwritableStateDir)),
			},
			{
				// ... and it runs with them, the new fragment pending; the configuration put
				// back, the fragment agrees with the files again and the activation has nothing to do.
				Config: config(port),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(slurmControllerAddr, plancheck.ResourceActionUpdate),
						expectPriorString(slurmActivationAddr, "status", regexp.MustCompile(`^activation pending \(restart of slurmctld\): StateSaveLocation changed$`)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.NoChange.String())),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSlurmConf(l, "StateSaveLocation=/var/spool/slurmctld", "SlurmctldPort=6820"),
					checkPing(l),
					func(*terraform.State) error {
						_, err := onHostErr(l, "login01", "systemctl is-active slurmctld && rm -rf "+unwritableStateDir)
						return err
					},
				),
			},
			{
				// extra = {} reads back as {}: no change at every plan.
				Config: config(port + "  extra = {}\n" + labCgroup(l, "extra = {}")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkPing(l),
			},
		},
	})
}

// unwritableStateDir is a state directory slurmctld, running as SlurmUser, cannot write.
const unwritableStateDir = "/var/tmp/gpucluster-rootonly"

// TestAccSlurmController_mungeRequired refuses to start slurmctld where munged does not run
// (pitfall P10), before anything is installed or written.
func TestAccSlurmController_mungeRequired(t *testing.T) {
	l := lab.Require(t)
	wasActive := onHost(t, l, "login01", "systemctl is-active munge 2>/dev/null || true") == "active"
	onHost(t, l, "login01", "systemctl stop munge 2>/dev/null || true")
	t.Cleanup(func() {
		if wasActive {
			onHost(t, l, "login01", "systemctl start munge")
		}
	})
	before := onHost(t, l, "login01", "ls "+slurm.FragmentDir+" 2>/dev/null | wc -l; command -v slurmctld || true")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      providerConfig(l, "") + "resource \"gpucluster_slurm_controller\" \"test\" {\n  node = \"login01\"\n" + labControllerSettings(l, "") + "}\n",
			ExpectError: regexp.MustCompile(`(?s)MUNGE Does Not Run.*pitfall P10.*depends_on = \[gpucluster_munge_key\.NAME\].*munge -n \| unmunge failed`),
		}},
	})
	if after := onHost(t, l, "login01", "ls "+slurm.FragmentDir+" 2>/dev/null | wc -l; command -v slurmctld || true"); after != before {
		t.Errorf("login01 changed: %q, before %q", after, before)
	}
}

// TestAccSlurmController_badInput refuses, at plan time and with no host changed, extra keys
// a typed attribute owns and GPU TRES without slurmdbd (P2).
func TestAccSlurmController_badInput(t *testing.T) {
	l := lab.Require(t)
	cases := map[string]struct{ extra, want string }{
		"typed key in extra":   {`  extra = { selecttype = "select/linear" }`, `(?s)Invalid Slurm Setting.*"selecttype" is set by the typed attribute\s+SelectType`},
		"node line in extra":   {`  extra = { NodeName = "gpu01" }`, `(?s)Invalid Slurm Setting.*NodeName`},
		"P2":                   {`  extra = { AccountingStorageTRES = "cpu,mem,gres/gpu" }`, `(?s)GPU Accounting Needs Slurmdbd.*Do Not Enable GPU Accounting Yet`},
		"space in value":       {`  scheduler_type = "sched/backfill x"`, `(?s)scheduler_type.*whitespace`},
		"cgroup key in extra":  {`  cgroup = { extra = { ConstrainCores = "no" } }`, `(?s)typed attribute\s+ConstrainCores`},
		"return_to_service 3":  {`  return_to_service = 3`, `(?s)return_to_service.*between 0 and 2`},
		"slurmdbd allows TRES": {`  extra = { AccountingStorageTRES = "gres/gpu", AccountingStorageType = "accounting_storage/slurmdbd", SlurmctldDebug = "a b" }`, `(?s)whitespace`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      providerConfig(l, "") + "resource \"gpucluster_slurm_controller\" \"test\" {\n  node = \"login01\"\n" + tc.extra + "\n}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// checkDaemonRefusesGPUTRES runs a second slurmctld in the foreground on login01 with the
// live slurm.conf plus AccountingStorageTRES=gres/gpu, in its own state directory and port,
// and wants it to die with the message the guide quotes. timeout bounds it if it does not.
func checkDaemonRefusesGPUTRES(t *testing.T, l *lab.Lab) {
	t.Helper()
	script := `set -u
d=$(mktemp -d) && trap 'rm -rf -- "$d"' EXIT
chmod 0755 "$d" && mkdir "$d/state" && chown slurm: "$d/state"
sed -e "s|^StateSaveLocation=.*|StateSaveLocation=$d/state|" -e 's|^SlurmctldPort=.*|SlurmctldPort=6899|' /etc/slurm/slurm.conf > "$d/slurm.conf"
printf 'SlurmctldPidFile=%s/pid\nAccountingStorageTRES=gres/gpu\n' "$d" >> "$d/slurm.conf"
timeout 30 slurmctld -D -i -f "$d/slurm.conf" 2>&1
echo "exit=$?"
`
	out, _, err := l.Exec(context.Background(), "login01", script)
	if err != nil {
		t.Fatalf("slurmctld with GPU TRES: %v: %s", err, out)
	}
	if !strings.Contains(out, "slurmdbd is required to run with TRES gres/gpu") || strings.Contains(out, "exit=0") || strings.Contains(out, "exit=124") {
		t.Fatalf("slurmctld did not refuse GPU TRES without slurmdbd as the guide says:\n%s", out)
	}
}
