package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// adoptImport is one import block for config generation: a static address, since generation
// cannot fill a for_each, and the import ID the resource's page documents.
type adoptImport struct{ to, id string }

// adoptGeneratedImports lists every resource of the hand-built cluster, as an admin adopting it
// with `terraform plan -generate-config-out` writes the import blocks: a resource for the whole
// cluster is one entry, a resource per node one entry in the loop over the nodes, and the
// firewall rules are those UFW holds on each node.
func adoptGeneratedImports(t *testing.T, l *lab.Lab) []adoptImport {
	t.Helper()
	nodes := labNodeNames(l)
	gpus := nodes[1:]
	all := strings.Join(nodes, ",")
	imports := []adoptImport{
		{"gpucluster_group.users", "users@" + all},
		{"gpucluster_user.alice", "alice@" + all},
		{"gpucluster_user.bob", "bob@" + all},
		{"gpucluster_munge_key.cluster", "login01@" + all},
		{"gpucluster_slurm_controller.cluster", "login01"},
		{"gpucluster_slurm_partition.gpu", "gpu@login01"},
		{"gpucluster_slurm_activation.cluster", "login01"},
		{"gpucluster_beegfs_management.cluster", "login01@" + strings.Join(gpus, ",")},
		{"gpucluster_beegfs_metadata.cluster", "login01:/beegfs/meta"},
	}
	for _, n := range nodes {
		imports = append(imports,
			adoptImport{"gpucluster_node." + n, n},
			adoptImport{"gpucluster_firewall." + n, n},
			adoptImport{"gpucluster_beegfs_client." + n, n},
		)
		for _, id := range ufwRuleIDs(t, l, n) {
			imports = append(imports, adoptImport{"gpucluster_firewall_rule." + hclName(id), id})
		}
	}
	for _, g := range gpus {
		imports = append(imports,
			adoptImport{"gpucluster_slurm_node." + g, g + "@login01"},
			adoptImport{"gpucluster_slurm_compute." + g, g},
			adoptImport{"gpucluster_beegfs_target." + g, g + ":/data/beegfs-storage"},
		)
	}
	return imports
}

// ufwRuleIDs are the import IDs of the rules UFW holds on node, read from its rules files.
func ufwRuleIDs(t *testing.T, l *lab.Lab, node string) []string {
	t.Helper()
	var tuples [2][]firewall.Tuple
	for i, f := range []string{"/etc/ufw/user.rules", "/etc/ufw/user6.rules"} {
		var err error
		if tuples[i], err = firewall.ParseTuples(onHost(t, l, node, "cat "+f)); err != nil {
			t.Fatalf("%s on %s: %v", f, node, err)
		}
	}
	var ids []string
	for _, r := range firewall.Rules(tuples[0], tuples[1]) {
		ids = append(ids, firewall.ID(node, r))
	}
	return ids
}

var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// hclName makes a resource name of an import ID: gpu01_allow_22_tcp_from_10_0_0_10.
func hclName(id string) string { return notInName.ReplaceAllString(id, "_") }

// adoptHandwritten is what generation cannot write: the provider's source and its block.
func adoptHandwritten(l *lab.Lab, imports []adoptImport) string {
	var b strings.Builder
	b.WriteString(cliRequiredProviders)
	b.WriteString(providerConfig(l, ""))
	for _, imp := range imports {
		b.WriteString(importBlock(imp.to, strconv.Quote(imp.id)))
	}
	return b.String()
}

// The config generation: import blocks for the whole hand-built cluster (Slurm and
// BeeGFS included) and
// `terraform plan -generate-config-out` give a configuration whose import plan changes nothing
// but the ledger lines of the firewall rules, users and groups, whose plan once imported is empty (-detailed-exitcode 0),
// and neither the import nor an apply after it writes a file under
// /etc or restarts a daemon on any host. It runs the real terraform binary against the provider
// built from this tree (dev_overrides), as an admin would.
func TestAccAdopt_generateConfig(t *testing.T) {
	l := lab.Require(t)
	tf := newTerraformCLI(t)
	buildByHand(t, l)
	imports := adoptGeneratedImports(t, l)
	seen := map[string]bool{}
	for _, imp := range imports {
		if seen[imp.to] {
			t.Fatalf("two import blocks for %s", imp.to)
		}
		seen[imp.to] = true
	}
	tf.write("main.tf", adoptHandwritten(l, imports))
	snapshot := func(withState bool) string { return hostSnapshot(t, l, withState) + beegfsSnapshot(t, l) }
	found := snapshot(false)

	// One plan generates the configuration, a second plans the imports with it: Terraform cannot
	// apply the generating plan itself once it changes something (its saved configuration lacks
	// the generated resources), and import only reads, so the second plan is not refused.
	tf.run(0, "plan", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(tf.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(generated, []byte("\nresource ")); n != len(imports) {
		t.Fatalf("generated.tf has %d resources for %d import blocks:\n%s", n, len(imports), generated)
	}
	tf.run(0, "plan", "-out=import.tfplan")
	// The plan imports every resource and changes none but the ledger lines.
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Type    string `json:"type"`
			Change  struct {
				Actions   []string         `json:"actions"`
				Before    any              `json:"before"`
				After     any              `json:"after"`
				Importing *json.RawMessage `json:"importing"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(tf.run(0, "show", "-json", "import.tfplan")), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.ResourceChanges) != len(imports) {
		t.Errorf("the plan has %d resources for %d import blocks", len(plan.ResourceChanges), len(imports))
	}
	var changes []planChange
	for _, rc := range plan.ResourceChanges {
		if rc.Change.Importing == nil {
			t.Errorf("%s: not imported", rc.Address)
		}
		changes = append(changes, planChange{rc.Address, rc.Type, rc.Change.Actions, rc.Change.Before, rc.Change.After})
	}
	if err := recordsLedgersOnly(changes); err != nil {
		t.Error(err)
	}
	if t.Failed() {
		t.Fatalf("generated.tf:\n%s", generated)
	}
	tf.run(0, "apply", "import.tfplan")
	if err := sameSnapshot("the import", found, snapshot(false)); err != nil {
		t.Fatal(err)
	}
	imported := snapshot(true)

	// The generated configuration and the provider block alone, the import blocks done with.
	tf.write("main.tf", adoptHandwritten(l, nil))
	tf.run(0, "plan", "-detailed-exitcode")
	tf.run(0, "apply", "-auto-approve")
	if err := sameSnapshot("the apply after the import", imported, snapshot(true)); err != nil {
		t.Fatal(err)
	}
}

// terraformCLI runs the terraform binary the acceptance tests use (TF_ACC_TERRAFORM_PATH, else
// terraform on PATH) in a directory of its own, with the provider built from this tree through
// dev_overrides: nothing is downloaded and no init is needed. The test runs inside the lab's
// network namespace (make testacc), and so does terraform.
type terraformCLI struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func newTerraformCLI(t *testing.T) *terraformCLI {
	t.Helper()
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("terraform"); err != nil {
			t.Fatalf("no terraform: set TF_ACC_TERRAFORM_PATH or put terraform on PATH (%v)", err)
		}
	}
	plugins := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "terraform-provider-gpucluster"), ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, out)
	}
	tf := &terraformCLI{t: t, bin: bin, dir: t.TempDir()}
	rc := filepath.Join(plugins, "terraformrc")
	tf.write(rc, fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/gpucluster/gpucluster" = %q
  }
  direct {}
}
`, plugins))
	tf.env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0")
	return tf
}

// write writes a file into the working directory, or to an absolute path.
func (tf *terraformCLI) write(name, content string) {
	tf.t.Helper()
	if !filepath.IsAbs(name) {
		name = filepath.Join(tf.dir, name)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		tf.t.Fatal(err)
	}
}

// cliRequiredProviders is what a configuration run by the terraform binary (not the test
// framework) needs to find the provider through dev_overrides.
const cliRequiredProviders = `terraform {
  required_providers {
    gpucluster = {
      source = "gpucluster/gpucluster"
    }
  }
}
`

// command is terraform with args, in the working directory, without colour.
func (tf *terraformCLI) command(args ...string) *exec.Cmd {
	cmd := exec.Command(tf.bin, append(args[:1:1], append([]string{"-no-color"}, args[1:]...)...)...)
	cmd.Dir, cmd.Env = tf.dir, tf.env
	return cmd
}

// run runs terraform with args and fails the test unless it exits with want; it returns stdout.
func (tf *terraformCLI) run(want int, args ...string) string {
	tf.t.Helper()
	cmd := tf.command(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	status := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		tf.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	if status != want {
		tf.t.Fatalf("terraform %s exited %d, want %d:\n%s\n%s", strings.Join(args, " "), status, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}
