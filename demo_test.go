package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoExample stands in for examples/cluster: a resource that an argument turns on, as
// -var accounting=true turns on Slurm accounting, and one that is always there. terraform_data
// is built into Terraform, so the demo's script runs against the real binary, offline.
const demoExample = `
variable "accounting" {
  type    = bool
  default = false
}
resource "terraform_data" "cluster" {}
resource "terraform_data" "accounting" {
  count = var.accounting ? 1 : 0
}
`

// demoRun runs make demo's apply script on dir's example with state in dir.
func demoRun(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	argv := append([]string{filepath.Join(dir, "example"), filepath.Join(dir, "demo.tfplan"), "-state=" + filepath.Join(dir, "terraform.tfstate")}, args...)
	cmd := exec.Command("tools/demo-apply.sh", argv...)
	cmd.Env = append(os.Environ(), append([]string{"CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=" + os.DevNull}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func demoResources(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("terraform", "-chdir="+filepath.Join(dir, "example"), "state", "list", "-state="+filepath.Join(dir, "terraform.tfstate"))
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("terraform state list: %v\n%s", err, out)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// A plain make demo after one with -var accounting=true stops before the apply, names what
// would be destroyed and how to go on, and leaves it in place; DEMO_ALLOW_DESTROY=1 goes on.
func TestDemoStopsBeforeDestroyingWhatAnEarlierDemoTurnedOn(t *testing.T) {
	for _, tool := range []string{"terraform", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH (make deps installs it)", tool)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "example"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "example", "main.tf"), []byte(demoExample), 0o600); err != nil {
		t.Fatal(err)
	}
	all := "terraform_data.accounting[0] terraform_data.cluster"

	if out, err := demoRun(t, dir, nil, "-var", "accounting=true"); err != nil {
		t.Fatalf("first demo with accounting: %v\n%s", err, out)
	}
	if got := demoResources(t, dir); got != all {
		t.Fatalf("after the first demo the state holds %q, want %q", got, all)
	}

	out, err := demoRun(t, dir, []string{"DEMO_ARGS="})
	if err == nil {
		t.Errorf("a plain demo after an accounting demo succeeded, want it to stop:\n%s", out)
	}
	for _, want := range []string{"terraform_data.accounting[0] (destroyed)", "DEMO_ALLOW_DESTROY=1", "same DEMO_ARGS"} {
		if !strings.Contains(out, want) {
			t.Errorf("the stop message lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "terraform_data.cluster") {
		t.Errorf("the stop message names a resource that stays:\n%s", out)
	}
	if got := demoResources(t, dir); got != all {
		t.Errorf("after the stopped demo the state holds %q, want %q unchanged", got, all)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo.tfplan")); !os.IsNotExist(err) {
		t.Errorf("the plan file is left behind (%v)", err)
	}

	if out, err := demoRun(t, dir, nil, "-var", "accounting=true"); err != nil {
		t.Errorf("the demo with the same DEMO_ARGS again: %v\n%s", err, out)
	}
	if out, err := demoRun(t, dir, []string{"DEMO_ALLOW_DESTROY=1"}); err != nil {
		t.Fatalf("a plain demo with DEMO_ALLOW_DESTROY=1: %v\n%s", err, out)
	}
	if got, want := demoResources(t, dir), "terraform_data.cluster"; got != want {
		t.Errorf("after DEMO_ALLOW_DESTROY=1 the state holds %q, want %q", got, want)
	}
}
