package provider

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
				ImportStateIdFunc: idInStateAt(mgmtdAddr, "auth_nodes"),
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

// liveMgmtd gives login01 a management service that runs on a database of its own, made as an
// admin makes it without this provider: the shipped beegfs-mgmtd.toml, with dbLine for db-file
// ("" keeps the shipped default), the database made by beegfs-mgmtd --init, the secrets of the
// guide, the service started. A database another test left at the guide's db_file is put aside.
// Cleanup stops the service and puts back what the test changed.
func liveMgmtd(t *testing.T, l *lab.Lab, dbLine, db string) {
	t.Helper()
	key, err := beegfs.GenerateTLSKey()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := beegfs.SelfSignedCert(key, beegfs.TLSNames{Node: "login01", Address: l.Host("login01").Address}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		onHost(t, l, "login01", `systemctl disable --now beegfs-mgmtd 2>/dev/null
rm -f `+db+` `+labDBFile+` `+beegfs.MgmtdDropInPath+`
systemctl daemon-reload
if [ -e /root/mgmtd.sqlite.tacc ]; then mv /root/mgmtd.sqlite.tacc `+labDBFile+`; fi
cp /root/beegfs-mgmtd.toml.tacc `+beegfs.MgmtdTOMLPath+`
while read -r f; do rm -f "$f"; done < /root/beegfs-secrets.tacc
rm -f /root/beegfs-secrets.tacc`)
	})
	onHost(t, l, "login01", fmt.Sprintf(`set -e
cfg=%[1]s
cp -a "$cfg" /root/beegfs-mgmtd.toml.tacc
if [ -e %[12]s ]; then mv %[12]s /root/mgmtd.sqlite.tacc; fi
dpkg-deb --fsys-tarfile %[2]s/beegfs-mgmtd_%[3]s_all.deb | tar -x -C / ."$cfg"
[ -z '%[4]s' ] || sed -i 's|^# *db-file = .*|%[4]s|' "$cfg"
: > /root/beegfs-secrets.tacc
for f in %[6]s %[7]s %[8]s; do [ -e "$f" ] || echo "$f" >> /root/beegfs-secrets.tacc; done
[ -e %[6]s ] || { dd if=/dev/urandom of=%[6]s bs=128 count=1 status=none; chmod 400 %[6]s; }
[ -e %[7]s ] || { echo %[9]s | base64 -d > %[7]s; chmod 400 %[7]s; }
[ -e %[8]s ] || echo %[10]s | base64 -d > %[8]s
mkdir -p "$(dirname %[5]s)"
%[11]s --init >/dev/null
systemctl restart beegfs-mgmtd`, beegfs.MgmtdTOMLPath, lab.RepoDir, lab.StandInVersion, dbLine, db,
		beegfs.ConnAuthPath, beegfs.TLSKeyPath, beegfs.TLSCertPath,
		base64.StdEncoding.EncodeToString(key), base64.StdEncoding.EncodeToString(cert), beegfs.MgmtdDaemon, labDBFile))
	if got := onHost(t, l, "login01", "systemctl is-active beegfs-mgmtd; test -f "+db+" && echo db"); got != "active\ndb" {
		t.Fatalf("login01's hand-made management service: %q, want it active on %s", got, db)
	}
}

// A controller whose beegfs-mgmtd runs on a database of its own: where a bare beegfs-mgmtd --init
// puts it (no db-file set), or at a db-file of the admin's. Creating the resource with the
// guide's db_file would point the service at a new, empty database and restart it; the plan
// refuses, naming the node, the database and what to do, and the database, the config, the
// guide's db_file and the running service stay as they were, with no --init run. Done as the
// refusal says, the database is adopted as it is.
func TestAccBeegfsManagement_liveDatabaseRefused(t *testing.T) {
	l := lab.Require(t)
	installBeegfs(t, l, "login01", "beegfs-mgmtd")
	const liveDB = "/beegfs/mgmtd-live/mgmtd.sqlite"
	cases := map[string]struct {
		dbLine, db, advice string
		keep               resource.TestStep // done as the refusal says
	}{
		"default db-file, on the root filesystem": {"", beegfs.DefaultMgmtdDBFile,
			"move it to db_file by hand: stop beegfs-mgmtd, mv " + beegfs.DefaultMgmtdDBFile + " " + labDBFile,
			resource.TestStep{Config: mgmtdConfig(l, nil)}},
		"db-file set": {`db-file = "` + liveDB + `"`, liveDB,
			"import it (terraform import gpucluster_beegfs_management.NAME login01",
			resource.TestStep{Config: providerConfig(l, "") + `
resource "gpucluster_beegfs_management" "test" {
  node    = "login01"
  db_file = "` + liveDB + `"
}
` + importBlock(mgmtdAddr, `"login01"`)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			liveMgmtd(t, l, tc.dbLine, tc.db)
			recordMgmtdInit(t, l)
			snapshot := "sha256sum " + tc.db + " " + beegfs.MgmtdTOMLPath + "; sha256sum " + labDBFile + " 2>&1 || true; " +
				"systemctl show -p ActiveState -p ActiveEnterTimestamp -p ActiveEnterTimestampMonotonic -p MainPID beegfs-mgmtd"
			before := onHost(t, l, "login01", snapshot)
			db := onHost(t, l, "login01", "sha256sum <"+tc.db)
			keep := tc.keep
			keep.PreConfig = func() {
				if after := onHost(t, l, "login01", snapshot); after != before {
					t.Errorf("the refused create changed login01:\n%s\nwas:\n%s", after, before)
				}
				if tc.db == beegfs.DefaultMgmtdDBFile {
					onHost(t, l, "login01", "systemctl stop beegfs-mgmtd && mv "+tc.db+" "+labDBFile+
						` && sed -i 's|^# *db-file = .*|db-file = "`+labDBFile+`"|' `+beegfs.MgmtdTOMLPath+" && systemctl start beegfs-mgmtd")
				}
			}
			keep.ConfigPlanChecks.PostApplyPostRefresh = []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}
			keep.Check = resource.ComposeAggregateTestCheckFunc(
				checkInitNotRun(l),
				checkOnHost(l, "login01", "sha256sum <$(sed -n 's/^db-file = \"\\(.*\\)\"/\\1/p' "+beegfs.MgmtdTOMLPath+"); systemctl is-active beegfs-mgmtd", db+"\nactive"))
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						Config: mgmtdConfig(l, nil),
						ExpectError: diagPattern("Management Database Would Be Abandoned", `resource "gpucluster_beegfs_management" "test"`,
							"The management database "+tc.db+", which beegfs-mgmtd's configuration names, would be abandoned on node login01",
							tc.advice, "mv "+tc.db+" "+tc.db+".old",
							"setting db-file to "+labDBFile+" would initialise a new, empty store"),
					},
					keep,
				},
			})
		})
	}
}
