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

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
)

const (
	mgmtdAddr   = "gpucluster_beegfs_management.test"
	labDBFile   = "/beegfs/mgmtd/mgmtd.sqlite"
	sha256Regex = `^[0-9a-f]{64}$`
)

func mgmtdResource(authNodes []string) string {
	return fmt.Sprintf(`
resource "gpucluster_beegfs_management" "test" {
  node       = "login01"
  auth_nodes = %s
}
`, hclList(authNodes))
}

func mgmtdConfig(l *lab.Lab, authNodes []string) string {
	return providerConfig(l, "") + mgmtdResource(authNodes)
}

// installBeegfs puts the stand-in packages on the lab hosts the way an admin installs
// ThinkParQ's; the resources themselves refuse to install them.
func installBeegfs(t *testing.T, l *lab.Lab, host string, pkgs ...string) {
	t.Helper()
	onHost(t, l, host, "missing=; for p in "+strings.Join(pkgs, " ")+"; do "+
		"dpkg-query -W -f='${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^ii' || missing=\"$missing $p\"; done; "+
		"[ -z \"$missing\" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null")
}

// TestAccBeegfsManagement_lifecycle creates the management service, grows auth_nodes in place,
// imports, repairs drift made by hand, survives the loss of its state without a second --init,
// and proves conn.auth and key.pem never reach the state or the trace log.
func TestAccBeegfsManagement_lifecycle(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, "login01", "beegfs-mgmtd")
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_LOG", "TRACE")
	secrets := &secretWatch{what: "a BeeGFS secret", resourceType: "gpucluster_beegfs_management", files: []string{beegfs.ConnAuthPath, beegfs.TLSKeyPath}}
	sameAuth := statecheck.CompareValue(compare.ValuesSame())
	sameCert := statecheck.CompareValue(compare.ValuesSame())
	var db string

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkMgmtdDestroyed(l),
		Steps: []resource.TestStep{
			{
				Config: mgmtdConfig(l, []string{"gpu01"}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("id"), knownvalue.StringExact("login01")),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("db_file"), knownvalue.StringExact(labDBFile)),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("mountpoint"), knownvalue.StringExact("/beegfs")),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("version"), knownvalue.StringRegexp(regexp.MustCompile(`^8\.`))),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("status"), knownvalue.StringExact(inSync)),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("node_status"), allInSyncValue([]string{"gpu01"})),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("conn_auth_sha256"), knownvalue.StringRegexp(regexp.MustCompile(sha256Regex))),
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("tls_cert_sha256"), knownvalue.StringRegexp(regexp.MustCompile(sha256Regex))),
					sameAuth.AddStateValue(mgmtdAddr, tfjsonpath.New("conn_auth_sha256")),
					sameCert.AddStateValue(mgmtdAddr, tfjsonpath.New("tls_cert_sha256")),
					secrets.stateLacks(l),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMgmtdOnController(l),
					checkSharedCopies(l, []string{"gpu01"}),
					func(*terraform.State) error {
						var err error
						db, err = onHostErr(l, "login01", "stat -c '%i %Y' "+labDBFile)
						return err
					},
				),
			},
			{
				Config: mgmtdConfig(l, []string{"gpu01", "gpu02"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(mgmtdAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mgmtdAddr, tfjsonpath.New("node_status"), allInSyncValue([]string{"gpu01", "gpu02"})),
					sameAuth.AddStateValue(mgmtdAddr, tfjsonpath.New("conn_auth_sha256")),
					sameCert.AddStateValue(mgmtdAddr, tfjsonpath.New("tls_cert_sha256")),
					secrets.stateLacks(l),
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkSharedCopies(l, []string{"gpu01", "gpu02"}), checkDBUnchanged(l, &db)),
			},
			{
				ResourceName:      mgmtdAddr,
				ImportState:       true,
				ImportStateId:     "login01@gpu01,gpu02",
				ImportStateVerify: true,
			},
			{
				// Drift by hand: a node lost its secret, the service was stopped.
				PreConfig: func() {
					onHost(t, l, "gpu02", "rm -f "+beegfs.ConnAuthPath)
					onHost(t, l, "login01", "systemctl stop "+beegfs.ServiceMgmtd)
				},
				Config: mgmtdConfig(l, []string{"gpu01", "gpu02"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(mgmtdAddr, plancheck.ResourceActionUpdate),
						expectBefore(mgmtdAddr, "node_status", "gpu02", beegfs.ConnAuthPath+" missing on gpu02"),
						expectBefore(mgmtdAddr, "node_status", "gpu01", inSync),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMgmtdOnController(l), checkSharedCopies(l, []string{"gpu01", "gpu02"}), checkDBUnchanged(l, &db)),
			},
			{
				PreConfig: func() {
					onHost(t, l, "login01", "rm -f "+beegfs.MgmtdDropInPath+" && systemctl daemon-reload")
				},
				Config: mgmtdConfig(l, []string{"gpu01", "gpu02"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectNonEmptyPlan()},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkMgmtdOnController(l),
			},
			{
				// Secrets left readable by others: shown per node and given back to root alone,
				// without rewriting them (their fingerprints stay).
				PreConfig: func() {
					onHost(t, l, "gpu01", "chmod 0644 "+beegfs.ConnAuthPath)
					onHost(t, l, "login01", "chmod 0640 "+beegfs.TLSKeyPath+" && chown root:adm "+beegfs.TLSKeyPath)
				},
				Config: mgmtdConfig(l, []string{"gpu01", "gpu02"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectBefore(mgmtdAddr, "node_status", "gpu01", beegfs.ConnAuthPath+" is root:root 644, want root:root 400 on gpu01"),
						expectBeforeValue(mgmtdAddr, "status", beegfs.TLSKeyPath+" is root:adm 640, want root:root 400"),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameAuth.AddStateValue(mgmtdAddr, tfjsonpath.New("conn_auth_sha256"))},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOnHost(l, "gpu01", "stat -c '%U:%G %a' "+beegfs.ConnAuthPath, "root:root 400"),
					checkOnHost(l, "login01", "stat -c '%U:%G %a' "+beegfs.TLSKeyPath, "root:root 400"),
				),
			},
			{
				// State loss: forget the resource without destroying it...
				PreConfig: func() { recordMgmtdInit(t, l) },
				Config: providerConfig(l, "") + `
removed {
  from = gpucluster_beegfs_management.test
  lifecycle {
    destroy = false
  }
}
`,
			},
			{
				// ... and create it again: its record still names the forgotten instance, so the
				// create is refused until the record is handed over...
				Config:      mgmtdConfig(l, []string{"gpu01", "gpu02"}),
				ExpectError: regexp.MustCompile(`(?s)Object Owned By Another Resource.*beegfs\s+management\s+mgmtd`),
			},
			{
				// ... and once it is, the database is adopted and --init does not run again.
				PreConfig: func() { onHost(t, l, "login01", "rm "+ownership.Dir+"/beegfs_management/mgmtd") },
				Config:    mgmtdConfig(l, []string{"gpu01", "gpu02"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(mgmtdAddr, plancheck.ResourceActionCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameAuth.AddStateValue(mgmtdAddr, tfjsonpath.New("conn_auth_sha256")),
					sameCert.AddStateValue(mgmtdAddr, tfjsonpath.New("tls_cert_sha256")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkMgmtdOnController(l), checkDBUnchanged(l, &db), checkInitNotRun(l)),
			},
		},
	})
	secrets.checkLog(t, logFile)
}

// TestAccBeegfsManagement_rootFilesystem refuses a database on the OS disk at plan time, and
// changes nothing on the host.
func TestAccBeegfsManagement_rootFilesystem(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, "login01", "beegfs-mgmtd")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig(l, "") + `
resource "gpucluster_beegfs_management" "test" {
  node    = "login01"
  db_file = "/var/lib/gpucluster-test-mgmtd/mgmtd.sqlite"
}
`,
			ExpectError: regexp.MustCompile(`(?s)Database Not On A Filesystem Of Its Own.*root filesystem`),
		}},
	})
	if out := onHost(t, l, "login01", "test -e /var/lib/gpucluster-test-mgmtd && echo created || true"); out != "" {
		t.Errorf("a refused plan %s the database directory", out)
	}
}

func TestParseManagementImportID(t *testing.T) {
	tests := []struct {
		id    string
		node  string
		nodes []string
		ok    bool
	}{
		{"login01", "login01", nil, true},
		{"login01@gpu02,gpu01,gpu01", "login01", []string{"gpu01", "gpu02"}, true},
		{"login01;reboot", "", nil, false},
		{"login01@gpu01,", "", nil, false},
	}
	for _, tt := range tests {
		node, nodes, ok := parseManagementImportID(tt.id)
		if ok != tt.ok || node != tt.node || strings.Join(nodes, ",") != strings.Join(tt.nodes, ",") {
			t.Errorf("%q: %q %v %v; want %q %v %v", tt.id, node, nodes, ok, tt.node, tt.nodes, tt.ok)
		}
	}
}

// checkMgmtdOnController looks at login01 through the lab, not the provider.
func checkMgmtdOnController(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "grep -c '^db-file = \""+labDBFile+"\"' "+beegfs.MgmtdTOMLPath+"; "+
			"stat -c '%s %a %U' "+beegfs.ConnAuthPath+"; stat -c '%a' "+beegfs.TLSKeyPath+" "+beegfs.TLSCertPath+"; "+
			"cat "+beegfs.MgmtdDropInPath+"; systemctl is-active "+beegfs.ServiceMgmtd+"; systemctl is-enabled "+beegfs.ServiceMgmtd+"; test -f "+labDBFile+" && echo db")
		if err != nil {
			return err
		}
		want := "1\n128 400 root\n400\n644\n[Unit]\nRequiresMountsFor=/beegfs\nactive\nenabled\ndb"
		if got != want {
			return fmt.Errorf("login01:\n%s\nwant:\n%s", got, want)
		}
		return nil
	}
}

// checkSharedCopies compares each node's conn.auth and cert.pem with login01's and with the
// fingerprints in state.
func checkSharedCopies(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		attrs := s.RootModule().Resources[mgmtdAddr].Primary.Attributes
		want := attrs["conn_auth_sha256"] + " " + attrs["tls_cert_sha256"] + " 400 644"
		for _, n := range append([]string{"login01"}, nodes...) {
			got, err := onHostErr(l, n, "echo $(sha256sum < "+beegfs.ConnAuthPath+" | cut -d' ' -f1) $(sha256sum < "+beegfs.TLSCertPath+" | cut -d' ' -f1) "+
				"$(stat -c %a "+beegfs.ConnAuthPath+") $(stat -c %a "+beegfs.TLSCertPath+")")
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s: %q, want %q", n, got, want)
			}
		}
		return nil
	}
}

// checkDBUnchanged proves --init did not run again: the database keeps its inode and mtime.
func checkDBUnchanged(l *lab.Lab, before *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "stat -c '%i %Y' "+labDBFile)
		if err != nil {
			return err
		}
		if *before == "" || got != *before {
			return fmt.Errorf("database %s is now %q (inode mtime), was %q: it was initialised again", labDBFile, got, *before)
		}
		return nil
	}
}

const (
	mgmtdInitMarker = "/run/gpucluster-test-mgmtd-init"
	mgmtdRealBinary = beegfs.MgmtdDaemon + ".gpucluster-test-real"
)

// recordMgmtdInit wraps beegfs-mgmtd on login01 so that every --init leaves a mark, and proves
// the wrapper records one; the stand-in's refusal of a second --init alone would hide a re-run.
// The wrapper runs the program the link points at: the stand-in acts as the name it is run by.
func recordMgmtdInit(t *testing.T, l *lab.Lab) {
	t.Helper()
	t.Cleanup(func() {
		onHost(t, l, "login01", "if [ -e "+mgmtdRealBinary+" ]; then mv -f "+mgmtdRealBinary+" "+beegfs.MgmtdDaemon+"; fi; rm -f "+mgmtdInitMarker)
	})
	onHost(t, l, "login01", "mv "+beegfs.MgmtdDaemon+" "+mgmtdRealBinary+" && "+
		"printf '#!/bin/sh\ncase \" $* \" in *\" --init \"*) echo ran >> "+mgmtdInitMarker+";; esac\nexec \"$(readlink -f "+mgmtdRealBinary+")\" \"$@\"\n' > "+beegfs.MgmtdDaemon+
		" && chmod 0755 "+beegfs.MgmtdDaemon+" && { "+beegfs.MgmtdDaemon+" --init >/dev/null 2>&1; true; }")
	if got := onHost(t, l, "login01", "cat "+mgmtdInitMarker+" && rm -f "+mgmtdInitMarker); got != "ran" {
		t.Fatalf("the --init recorder does not record (%q)", got)
	}
}

func checkInitNotRun(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "cat "+mgmtdInitMarker+" 2>/dev/null; true")
		if err != nil {
			return err
		}
		if got != "" {
			return fmt.Errorf("beegfs-mgmtd --init ran again after the state was lost")
		}
		return nil
	}
}

// checkMgmtdDestroyed: the service is stopped and disabled, the drop-in gone, and the database
// and the secret are still there.
func checkMgmtdDestroyed(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, "login01", "systemctl is-active "+beegfs.ServiceMgmtd+"; systemctl is-enabled "+beegfs.ServiceMgmtd+"; "+
			"test -e "+beegfs.MgmtdDropInPath+" && echo drop-in; test -f "+labDBFile+" && echo db; test -f "+beegfs.ConnAuthPath+" && echo auth; true")
		if err != nil {
			return err
		}
		if want := "inactive\ndisabled\ndb\nauth"; got != want {
			return fmt.Errorf("login01 after destroy: %q, want %q (stopped, disabled, no drop-in, database and secret kept)", got, want)
		}
		return nil
	}
}
