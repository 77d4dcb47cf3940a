package lab_test

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// The management service and the beegfs command, checked on the lab's hosts against what
// ThinkParQ's 8.x packages do (FIDELITY.md). Each test works in a scratch directory with
// the service on ports of its own, so it never meets the provider tests' service.

// The shipped beegfs-mgmtd.toml sets nothing, and the parser refuses what the real one
// refuses: a cap-pool table without all four keys, an unknown key.
func TestLabStandInMgmtdConfig(t *testing.T) {
	l := lab.Require(t)
	s := standInScratch(t, l, lab.LoginHost, beegfs.MgmtdPackage)
	toml := s + "/pkg" + beegfs.MgmtdTOMLPath
	if active := mustExec(t, l, lab.LoginHost, "grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "+toml+" || true"); active != "" {
		t.Errorf("the shipped %s has active lines; the real one comments out every setting:\n%s", beegfs.MgmtdTOMLPath, active)
	}
	out, status := execStatus(t, l, lab.LoginHost, beegfs.MgmtdDaemon+" --config-file "+toml+" --db-file "+s+"/new/mgmtd.sqlite --init 2>&1")
	if want := "Created new database version 5 at \"" + s + "/new/mgmtd.sqlite\".\n"; out != want || status != 0 {
		t.Errorf("--init with the shipped config: %q, status %d; want %q", out, status, want)
	}
	for doc, want := range map[string]string{
		"[cap-pool-meta-limits]\ninodes-low = \"10M\"\n": "Could not parse config file: TOML parse error at line 1, column 1\n  |\n1 | [cap-pool-meta-limits]\n  | ^^^^^^^^^^^^^^^^^^^^^^\nmissing field `inodes-emergency`\nError: 1\n",
		"db-file = \"/x\"\nfoo = 1\n":                   "Could not parse config file: TOML parse error at line 2, column 1\n  |\n2 | foo = 1\n  | ^^^\nunknown field `foo`, expected one of `db-file`",
	} {
		out, status := execStatus(t, l, lab.LoginHost, "printf '%s' '"+doc+"' > "+s+"/bad.toml; "+beegfs.MgmtdDaemon+" --config-file "+s+"/bad.toml 2>&1")
		if status != 1 || !strings.HasPrefix(out, want) {
			t.Errorf("config %q: status %d\n%s\nwant it to start with\n%s", doc, status, out, want)
		}
	}
}

// The unit is the real one, Type=notify: systemctl start fails when a start-up check does,
// with the real lines in the journal.
func TestLabStandInMgmtdUnit(t *testing.T) {
	l := lab.Require(t)
	const host = "gpu02" // no management service of the provider's tests runs here
	unit := mustExec(t, l, host, "systemctl cat "+beegfs.ServiceMgmtd)
	for _, want := range []string{"Type=notify\n", "ExecStart=/opt/beegfs/sbin/beegfs-mgmtd --log-target=journald\n", "After=network-online.target\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	mustExec(t, l, host, "test ! -e /var/lib/beegfs/mgmtd.sqlite")
	if _, status := execStatus(t, l, host, "systemctl start "+beegfs.ServiceMgmtd); status == 0 {
		t.Error("systemctl start succeeded without a database")
	}
	journal := mustExec(t, l, host, "journalctl -u "+beegfs.ServiceMgmtd+" -o cat --no-pager | tail -n 20")
	for _, want := range []string{
		"No accessible database file found at \"/var/lib/beegfs/mgmtd.sqlite\": No such file or directory (os error 2)",
		"If you want to initialize a new system, refer to --help or doc.beegfs.io.",
		"Error: 1",
	} {
		if !strings.Contains(journal, want) {
			t.Errorf("the journal lacks %q:\n%s", want, journal)
		}
	}
}

// startScratchMgmtd runs a management service without TLS on ports of its own, in s, and
// returns the beegfs command's flags to reach it.
func startScratchMgmtd(t *testing.T, l *lab.Lab, s string) string {
	t.Helper()
	flags := " --db-file " + s + "/mgmtd.sqlite --auth-file " + s + "/conn.auth --tls-disable --beemsg-port 18008 --grpc-port 18010 --log-target stderr"
	mustExec(t, l, lab.LoginHost, beegfs.MgmtdDaemon+" --config-file "+s+"/pkg"+beegfs.MgmtdTOMLPath+flags+" --init >/dev/null && "+
		"(setsid "+beegfs.MgmtdDaemon+" --config-file "+s+"/pkg"+beegfs.MgmtdTOMLPath+flags+" >"+s+"/mgmtd.log 2>&1 & echo $! > "+s+"/mgmtd.pid) && "+
		"for i in $(seq 50); do ss -ltn | grep -q ':18010 ' && exit 0; sleep 0.1; done; cat "+s+"/mgmtd.log; exit 1")
	t.Cleanup(func() { mustExec(t, l, lab.LoginHost, "kill $(cat "+s+"/mgmtd.pid)") })
	return " --mgmtd-addr 127.0.0.1:18010 --tls-disable --auth-file " + s + "/conn.auth"
}

// The beegfs command's tables, dry-run delete, error lines and health check, as the real
// one prints them.
func TestLabStandInBeegfsCommand(t *testing.T) {
	l := lab.Require(t)
	if got := mustExec(t, l, lab.LoginHost, "readlink -f /usr/sbin/beegfs; readlink -f "+beegfs.CLIPath); got != "/usr/lib/beegfs-standin/beegfs-tools\n/usr/lib/beegfs-standin/beegfs-tools\n" {
		t.Errorf("beegfs is not installed where beegfs-tools puts it: %q", got)
	}
	s := standInScratch(t, l, lab.LoginHost, beegfs.MgmtdPackage)
	cli := beegfs.CLIPath + startScratchMgmtd(t, l, s)
	for _, c := range []struct {
		cmd, out string
		status   int
	}{
		{cli + " node list 2>/dev/null", "ID    TYPE        ALIAS       \nmg:1  management  management  \n\n", 0},
		{cli + " target list 2>/dev/null", "", 0},
		{cli + " target delete 101 2>&1", "Error: rpc error: code = Unknown desc = Delete target: target storage:101 does not exist\n", 1},
		{cli + " node delete mg:1 2>&1", "Error: invalid id type specifier 'mg' - accepted are 'client', 'meta', 'storage', 'uid'\n", 1},
		{beegfs.CLIPath + " node list --mgmtd-addr 127.0.0.1:18010 --tls-disable --auth-disable 2>&1",
			"Error: unable to proceed without a working management node: rpc error: code = Unauthenticated desc = Request requires authentication but no secret was provided\n", 1},
		{beegfs.CLIPath + " node list --mgmtd-addr 127.0.0.1:18011 --tls-disable --auth-file " + s + "/conn.auth 2>&1",
			"Error: unable to proceed without a working management node: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:18011: connect: connection refused\"\n", 1},
	} {
		if out, status := execStatus(t, l, lab.LoginHost, c.cmd); out != c.out || status != c.status {
			t.Errorf("%s:\n%q, status %d\nwant\n%q, status %d", c.cmd, out, status, c.out, c.status)
		}
	}
	// Without TLS the real 8.4 check always fails, on that line.
	out, status := execStatus(t, l, lab.LoginHost, cli+" health check 2>&1")
	for _, want := range []string{"⚠️  Management TLS -> Not in use.", "✅ License Status -> No issues detected.", "Error: one or more checks failed\n"} {
		if !strings.Contains(out, want) || status != 1 {
			t.Errorf("health check without TLS lacks %q (status %d):\n%s", want, status, out)
		}
	}
}
