package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// importParsers checks an import ID the way each resource's ImportState does before it reads
// any host, with the provider's login_node set to login01.
var importParsers = map[string]func(id string) error{
	"gpucluster_node":              matching(nodeRefPattern),
	"gpucluster_user":              func(id string) error { _, _, d := parseAccountImportID(id, "user"); return diagErr(d) },
	"gpucluster_group":             func(id string) error { _, _, d := parseAccountImportID(id, "group"); return diagErr(d) },
	"gpucluster_munge_key":         func(id string) error { _, _, d := parseMungeKeyImportID(id, nil); return diagErr(d) },
	"gpucluster_slurm_controller":  matching(nodeRefPattern),
	"gpucluster_slurm_node":        slurmObjectParser,
	"gpucluster_slurm_partition":   slurmObjectParser,
	"gpucluster_slurm_compute":     matching(slurm.NamePattern),
	"gpucluster_slurm_activation":  matching(nodeRefPattern),
	"gpucluster_slurm_accounting":  func(id string) error { _, _, d := parseAccountingImportID(id); return diagErr(d) },
	"gpucluster_slurm_account":     slurmObjectParser,
	"gpucluster_slurm_qos":         slurmObjectParser,
	"gpucluster_slurm_user":        slurmObjectParser,
	"gpucluster_firewall":          matching(nodeRefPattern),
	"gpucluster_firewall_rule":     func(id string) error { _, _, err := firewall.ParseID(id); return err },
	"gpucluster_beegfs_management": managementParser,
	"gpucluster_beegfs_metadata":   func(id string) error { _, _, err := parseNodePathID(id); return err },
	"gpucluster_beegfs_target":     func(id string) error { _, _, err := parseNodePathID(id); return err },
	"gpucluster_beegfs_client":     matching(nodeRefPattern),
	"gpucluster_slurm_backup": func(id string) error {
		if _, _, ok := parseBackupImportID(id); !ok {
			return errors.New("not DESTINATION@CONTROLLER")
		}
		return nil
	},
	"gpucluster_rolling_reboot": func(id string) error {
		if _, _, ok := parseRollingImportID(id); !ok {
			return errors.New("not NODE,NODE@CONTROLLER")
		}
		return nil
	},
}

func slurmObjectParser(id string) error {
	_, _, d := parseNameAtController(id, "gpu01@login01", "login01")
	return diagErr(d)
}

func managementParser(id string) error {
	if _, _, ok := parseManagementImportID(id); !ok {
		return errors.New("not NODE or NODE@NODE1,NODE2")
	}
	return nil
}

func matching(p *regexp.Regexp) func(string) error {
	return func(id string) error {
		if !p.MatchString(id) {
			return errors.New("not a node name")
		}
		return nil
	}
}

func diagErr(d diag.Diagnostics) error {
	if d.HasError() {
		return errors.New(d.Errors()[0].Detail())
	}
	return nil
}

var (
	guideRow      = regexp.MustCompile("^\\| `(gpucluster_[a-z_]+)` \\|[^|]*\\| ([^|]+) \\|")
	backticked    = regexp.MustCompile("`([^`]+)`")
	importLine    = regexp.MustCompile(`^terraform import (gpucluster_[a-z_]+)\.\S+ (\S+)$`)
	importBlockRe = regexp.MustCompile(`(?s)import \{\s*to = (gpucluster_[a-z_]+)\.\S+\s*id = "([^"]+)"`)
	guideSource   = "../../templates/guides/import-ids.md.tmpl"
	examplesRoot  = "../../examples/resources"
)

// guideExamples reads the import ID table of the guide: each resource's example IDs.
func guideExamples(t *testing.T) map[string][]string {
	t.Helper()
	content, err := os.ReadFile(guideSource)
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string][]string{}
	for _, line := range strings.Split(string(content), "\n") {
		m := guideRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, ex := range backticked.FindAllStringSubmatch(m[2], -1) {
			examples[m[1]] = append(examples[m[1]], ex[1])
		}
	}
	return examples
}

// TestImportIDGuide parses every example of the import ID table with the resource's own parser,
// and checks that the table has a row for every resource of the provider.
func TestImportIDGuide(t *testing.T) {
	examples := guideExamples(t)
	for _, newResource := range New("test")().Resources(context.Background()) {
		var md fwresource.MetadataResponse
		newResource().Metadata(context.Background(), fwresource.MetadataRequest{ProviderTypeName: "gpucluster"}, &md)
		if len(examples[md.TypeName]) == 0 {
			t.Errorf("the import ID table has no example for %s", md.TypeName)
		}
		if importParsers[md.TypeName] == nil {
			t.Errorf("no import parser for %s", md.TypeName)
		}
	}
	for typeName, ids := range examples {
		parse := importParsers[typeName]
		if parse == nil {
			t.Errorf("the table lists %s, which is not a resource", typeName)
			continue
		}
		for _, id := range ids {
			if err := parse(id); err != nil {
				t.Errorf("%s: the table's example %q does not parse: %v", typeName, id, err)
			}
		}
	}
}

// TestImportIDExamples parses the ID of every import.sh and import block example with the
// resource's parser.
func TestImportIDExamples(t *testing.T) {
	blocks, err := filepath.Glob(filepath.Join(examplesRoot, "*", "import-by-string-id.tf"))
	if err != nil || len(blocks) == 0 {
		t.Fatalf("no import block examples: %v", err)
	}
	for _, f := range blocks {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := importBlockRe.FindSubmatch(content)
		if m == nil {
			t.Errorf("%s has no import block", f)
			continue
		}
		if err := importParsers[string(m[1])](string(m[2])); err != nil {
			t.Errorf("%s: %q does not parse: %v", f, m[2], err)
		}
	}
	files, err := filepath.Glob(filepath.Join(examplesRoot, "*", "import.sh"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no import.sh examples: %v", err)
	}
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		imports := 0
		for _, line := range strings.Split(string(content), "\n") {
			m := importLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			imports++
			if err := importParsers[m[1]](m[2]); err != nil {
				t.Errorf("%s: %q does not parse: %v", f, m[2], err)
			}
		}
		if imports == 0 {
			t.Errorf("%s has no terraform import line", f)
		}
	}
}

// TestBareSlurmImportID shows a Slurm object's bare name, the id its state shows, found on the
// provider's login_node, and refused when the provider sets none.
func TestBareSlurmImportID(t *testing.T) {
	for _, tc := range []struct {
		id, loginNode, name, controller, refusal string
	}{
		{id: "gpu01@login01", loginNode: "", name: "gpu01", controller: "login01"},
		{id: "gpu01@ctl02", loginNode: "login01", name: "gpu01", controller: "ctl02"},
		{id: "gpu01", loginNode: "login01", name: "gpu01", controller: "login01"},
		{id: "gpu01", loginNode: "", refusal: "names no controller and the provider sets no login_node"},
		{id: "gpu01@", loginNode: "login01", refusal: `"" is not a node name`},
		{id: "gpu;01", loginNode: "login01", refusal: "is not a Slurm name"},
		{id: "@login01", loginNode: "login01", refusal: `"" is not a Slurm name`},
	} {
		name, controller, diags := parseNameAtController(tc.id, "gpu01@login01", tc.loginNode)
		if tc.refusal != "" {
			if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), tc.refusal) ||
				!strings.Contains(diags.Errors()[0].Detail(), slurmObjectForm) {
				t.Errorf("%q with login_node %q: want a refusal saying %q and the form, got %v", tc.id, tc.loginNode, tc.refusal, diags)
			}
			continue
		}
		if diags.HasError() || name != tc.name || controller != tc.controller {
			t.Errorf("%q with login_node %q: got %q on %q (%v), want %q on %q", tc.id, tc.loginNode, name, controller, diags, tc.name, tc.controller)
		}
	}
}

// idInState is the id the resource's state shows, as an import step's ID: the ID a plan shows
// as [id=...] must import the resource.
func idInState(address string) resource.ImportStateIdFunc {
	return func(s *terraform.State) (string, error) {
		rs, ok := s.RootModule().Resources[address]
		if !ok {
			return "", fmt.Errorf("%s is not in the state", address)
		}
		return rs.Primary.Attributes["id"], nil
	}
}

// idInStateAt is the id the resource's state shows with the nodes of its attribute attr added
// after @, as the import ID table says for a resource whose id leaves them out.
func idInStateAt(address, attr string) resource.ImportStateIdFunc {
	return func(s *terraform.State) (string, error) {
		rs, ok := s.RootModule().Resources[address]
		if !ok {
			return "", fmt.Errorf("%s is not in the state", address)
		}
		var nodes []string
		for k, v := range rs.Primary.Attributes {
			if strings.HasPrefix(k, attr+".") && k != attr+".#" {
				nodes = append(nodes, v)
			}
		}
		if len(nodes) == 0 {
			return "", fmt.Errorf("%s has no %s in the state", address, attr)
		}
		slices.Sort(nodes)
		return rs.Primary.Attributes["id"] + "@" + strings.Join(nodes, ","), nil
	}
}

// TestInvalidImportIDNamesTheGrammar shows every refusal of an import ID ending with the one
// grammar and where its table is, and an account's bare name told what to add.
func TestInvalidImportIDNamesTheGrammar(t *testing.T) {
	_, _, diags := parseAccountImportID("alice", "user")
	if !diags.HasError() {
		t.Fatal("a bare account name imported, want a refusal")
	}
	detail := diags.Errors()[0].Detail()
	for _, want := range []string{"the resource's id is the name alone, so add @ and the nodes", "OBJECT[@NODE[,NODE...]]", "docs/guides/import-ids.md", "Nothing was read or changed"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q lacks %q", detail, want)
		}
	}
}
