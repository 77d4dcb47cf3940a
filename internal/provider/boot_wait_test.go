package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// bootWaitLine is the INFO line of each retry while a node boots.
const bootWaitLine = "node not up yet, waiting"

// With gpu02 powered off, a node known at plan and without boot_timeout fails at plan with no
// wait. Then the apply itself powers gpu02 on (a local-exec that starts it in the background
// a few seconds later, as a cloud machine's network comes up some time after its creation, and
// hands its address on, unknown at plan, as a cloud module does): with boot_timeout the node
// waits for SSH (then for the boot), logging its retries, and applies; gpu02's PID 1 started
// during that apply.
func TestAccNode_bootWaitForMachinePoweredOnByApply(t *testing.T) {
	l := lab.Require(t)
	if l.Command == "" {
		t.Fatal("the lab descriptor names no gpucluster-lab command to power gpu02 on with: restart the lab with `make lab-up`")
	}
	dir := t.TempDir()
	logFile := filepath.Join(dir, "terraform.log")
	started := filepath.Join(dir, "start.status")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "INFO")
	t.Cleanup(func() { restartGPU02(t, started) })
	var stoppedAt time.Time

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(s *terraform.State) error { return checkNodeReleased(freshLab(t), "gpu02")(s) },
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					if err := l.Stop(context.Background(), "gpu02"); err != nil {
						t.Fatal(err)
					}
					stoppedAt = time.Now()
				},
				Config:      bootWaitProvider(l) + "resource \"gpucluster_node\" \"test\" {\n  name = \"gpu02\"\n}\n",
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Cannot Connect To Node`),
			},
			{
				PreConfig: func() {
					if n := countLogLines(t, logFile, bootWaitLine); n != 0 {
						t.Errorf("the node known at plan logged %d boot-wait retries, want none: it must fail at once", n)
					}
				},
				Config: poweredOnByApplyConfig(l, started),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownValue("gpucluster_node.test", tfjsonpath.New("address"))},
				},
				Check: func(*terraform.State) error {
					// The boot's own end may come before SSH answers, so only the wait for SSH is sure.
					if countLogLines(t, logFile, "waiting_for=ssh") == 0 {
						return fmt.Errorf("the apply logged no %q line with waiting_for=ssh: gpucluster_node did not wait for gpu02", bootWaitLine)
					}
					return checkBootedSince(freshLab(t), "gpu02", stoppedAt)
				},
			},
		},
	})
}

// bootWaitProvider is the lab's provider with a connect timeout shorter than the delay before
// the apply powers gpu02 on, so the apply's first dial surely fails.
func bootWaitProvider(l *lab.Lab) string {
	return providerConfig(l, "  connect_timeout = \"3s\"\n")
}

// poweredOnByApplyConfig starts gpu02 from a local-exec in the background, seconds after the
// apply created terraform_data, recording the lab command's exit status in started, and feeds
// gpu02's address to a node that waits for its boot.
func poweredOnByApplyConfig(l *lab.Lab, started string) string {
	start := fmt.Sprintf("(sleep 5; %s start gpu02; echo $? > %s) >%s.log 2>&1 &", l.Command, started, started)
	return bootWaitProvider(l) + fmt.Sprintf(`
resource "terraform_data" "gpu02" {
  input = %q
  provisioner "local-exec" {
    command     = %q
    environment = { %s = %q, %s = %q }
  }
}

resource "gpucluster_node" "test" {
  name         = "gpu02"
  address      = terraform_data.gpu02.output
  boot_timeout = "5m"
}
`, l.Host("gpu02").Address, start, lab.EnvDescriptor, os.Getenv(lab.EnvDescriptor), lab.EnvInstance, l.Instance)
}

// checkBootedSince checks on the host that its PID 1 started after since.
func checkBootedSince(l *lab.Lab, host string, since time.Time) error {
	out, err := onHostErr(l, host, "ps -o etimes= -p 1")
	if err != nil {
		return err
	}
	up, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return fmt.Errorf("%s: PID 1's elapsed time %q: %w", host, out, err)
	}
	if booted := time.Now().Add(-time.Duration(up) * time.Second); booted.Before(since.Add(-time.Second)) {
		return fmt.Errorf("%s's PID 1 started at %s, before it was stopped at %s: the apply did not boot it", host, booted.Format(time.TimeOnly), since.Format(time.TimeOnly))
	}
	return nil
}

// restartGPU02 waits for the background start an apply launched, then makes sure gpu02 runs
// for the tests after this one.
func restartGPU02(t *testing.T, started string) {
	if _, launched := os.Stat(started + ".log"); launched == nil {
		if err := pollLab(3*time.Minute, func() error {
			_, err := os.Stat(started)
			return err
		}); err != nil {
			t.Errorf("the apply's start of gpu02 did not finish: %v", err)
		}
	}
	l := freshLab(t)
	if !l.Running("gpu02") {
		if err := l.Start(context.Background(), "gpu02"); err != nil {
			t.Errorf("start gpu02 again: %v", err)
		}
	}
}

// freshLab reloads the lab's descriptor, which a start from outside the test rewrote.
func freshLab(t *testing.T) *lab.Lab {
	t.Helper()
	l, err := lab.Load(os.Getenv(lab.EnvDescriptor))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func countLogLines(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), text)
}
