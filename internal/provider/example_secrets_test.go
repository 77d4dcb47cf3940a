package provider

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// Issue #25: examples/lab-cluster declared sudo_password sensitive but not ephemeral, and
// Terraform writes every other variable's value into a saved plan. examples/cluster, with the
// lab's variables, planned against the lab with `terraform plan -out` (the provider configured
// with the password, so it reaches the nodes) leaves the password out of the plan file, whole
// and as `terraform show -json` renders it.
func TestAccExample_savedPlanHoldsNoSudoPassword(t *testing.T) {
	l := lab.Require(t)
	if len(l.AdminPassword) < 8 {
		t.Fatalf("the lab's sudo password %q is too short to search for", l.AdminPassword)
	}
	tf := clusterExampleOnLab(t, l)
	// One node is enough: the provider is configured, and connects with sudo, for any plan.
	tf.run(0, "plan", "-input=false", "-out=saved.tfplan", "-target=gpucluster_node.login01")

	shown := tf.run(0, "show", "-json", "saved.tfplan")
	if !strings.Contains(shown, `"gpucluster_node.login01"`) {
		t.Fatalf("the saved plan does not plan gpucluster_node.login01: the test would prove nothing:\n%s", shown)
	}
	if strings.Contains(shown, l.AdminPassword) {
		t.Errorf("terraform show -json of the saved plan holds the sudo password")
	}
	for name, content := range planFileEntries(t, filepath.Join(tf.dir, "saved.tfplan")) {
		if strings.Contains(content, l.AdminPassword) {
			t.Errorf("the saved plan's %s holds the sudo password", name)
		}
	}
}

// copyExample copies an example's Terraform files, as a reader who copies it would.
func copyExample(t *testing.T, from, to string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(from, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s (%v)", from, err)
	}
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// planFileEntries reads every file of a saved plan, which Terraform writes as a zip archive.
func planFileEntries(t *testing.T, planFile string) map[string]string {
	t.Helper()
	z, err := zip.OpenReader(planFile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = z.Close() }()
	entries := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil {
			t.Fatal(err)
		}
		entries[f.Name] = string(content)
	}
	return entries
}
