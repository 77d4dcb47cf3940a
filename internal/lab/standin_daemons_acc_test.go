package lab_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// The stand-in metadata and storage services as the real packages ship and run them: their
// units, configs, start-up checks and messages, the files they write, and their registration
// with the management service. Each test runs the daemons as transient units of the shipped
// type on scratch copies of the shipped configs (standInScratch), overriding settings with the
// daemon's own key=value arguments.

// daemonUnit starts tool (beegfs-meta or beegfs-storage) as a transient unit of the shipped
// unit's type, with cfg and args, and returns the unit's name; cleanup stops it.
func daemonUnit(t *testing.T, l *lab.Lab, host, tool, cfg string, args ...string) string {
	t.Helper()
	unit := fmt.Sprintf("standin-%s-%d", tool, time.Now().UnixNano())
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), host, "systemctl stop "+unit+" 2>/dev/null; systemctl reset-failed "+unit+" 2>/dev/null; true")
	})
	mustExec(t, l, host, "systemd-run --quiet --unit="+unit+" --property=Type=simple "+beegfs.SbinDir+"/"+tool+" cfgFile="+cfg+" runDaemonized=false "+strings.Join(args, " "))
	return unit
}

// settle waits until unit has ended, or until its journal has a line containing want, and
// returns its state, exit status and the journal of its main process.
func settle(t *testing.T, l *lab.Lab, host, unit, want string) (state string, status int, journal string) {
	t.Helper()
	script := `pid=$(systemctl show -p ExecMainPID --value ` + unit + `)
for i in $(seq 150); do
	s=$(systemctl show -p ActiveState --value ` + unit + `)
	case $s in active|activating) ;; *) sleep 0.3; break ;; esac
	journalctl -q -o cat _PID=$pid | grep -qF -- ` + shellQuote(want) + ` && break
	sleep 0.1
done
echo "$(systemctl show -p ActiveState --value ` + unit + `) $(systemctl show -p ExecMainStatus --value ` + unit + `)"
journalctl -q -o cat _PID=$pid`
	out := mustExec(t, l, host, script)
	first, rest, _ := strings.Cut(out, "\n")
	fields := strings.Fields(first)
	if len(fields) != 2 {
		t.Fatalf("%s on %s: no state in %q", unit, host, out)
	}
	status, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(err)
	}
	return fields[0], status, rest
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// The shipped units and configs are ThinkParQ's: Type=simple, in /lib/systemd/system, and the
// default lines of the real files.
func TestLabStandInDaemonUnitsAndConfigs(t *testing.T) {
	l := lab.Require(t)
	host := l.HostsWithRole(lab.RoleGPU)[0].Name
	for _, tool := range []string{"beegfs-meta", "beegfs-storage"} {
		unit := mustExec(t, l, host, "grep -E '^(Type|ExecStart|Requires)=' /lib/systemd/system/"+tool+".service && dpkg -S /lib/systemd/system/"+tool+".service")
		want := "Requires=network-online.target\nExecStart=/opt/beegfs/sbin/" + tool + " cfgFile=/etc/beegfs/" + tool + ".conf runDaemonized=false\nType=simple\n" + tool + ": /lib/systemd/system/" + tool + ".service\n"
		if unit != want {
			t.Errorf("%s unit:\n%s\nwant:\n%s", tool, unit, want)
		}
	}
	for file, lines := range map[string][]string{
		beegfs.MetaConfPath: {"sysMgmtdHost                 =", "storeMetaDirectory           =", "storeAllowFirstRunInit       = true",
			"storeFsUUID                  =", "connAuthFile                 = /etc/beegfs/conn.auth", "connMetaPort                 = 8005",
			"connMgmtdPort                = 8008", "logType                      = syslog", "logStdFile                   = /var/log/beegfs-meta.log",
			"runDaemonized                = true", "storeUseExtendedAttribs      = true", "tuneNumWorkers               = 0"},
		beegfs.StorageConfPath: {"sysMgmtdHost                 =", "storeStorageDirectory        =", "storeAllowFirstRunInit       = true",
			"storeFsUUID                  =", "connAuthFile                 = /etc/beegfs/conn.auth", "connStoragePort              = 8003",
			"connMgmtdPort                = 8008", "logType                      = syslog ", "runDaemonized                = true", "tuneNumWorkers               = 12"},
	} {
		s := standInScratch(t, l, host, strings.TrimSuffix(strings.TrimPrefix(file, beegfs.ConfDir+"/"), ".conf"))
		got := mustExec(t, l, host, "cat "+s+"/pkg"+file)
		for _, line := range lines {
			if !strings.Contains("\n"+got, "\n"+line+"\n") {
				t.Errorf("%s lacks the line %q", file, line)
			}
		}
	}
}

// beegfs-setup-storage as the real script: it appends to the lists with a blank and a comma
// (so a second target gives "= ,/a ,/b"), -r replaces the directory list but still appends
// the UUID, -u leaves the interlock alone, and it refuses a non-empty directory and a second
// append of a listed one in the real words.
func TestLabStandInSetupStorageForms(t *testing.T) {
	l := lab.Require(t)
	host := l.HostsWithRole(lab.RoleGPU)[0].Name
	s, disk := standInScratchOnDisk(t, l, host, "beegfs-storage")
	cfg := s + "/pkg" + beegfs.StorageConfPath
	lists := func() string {
		return mustExec(t, l, host, `sed -n 's/^\(storeStorageDirectory\|storeFsUUID\|storeAllowFirstRunInit\|sysMgmtdHost\) *= *\(.*\)$/\1=\2/p' `+cfg)
	}
	setup := beegfs.SetupStorageTool + " -c " + cfg

	out := mustExec(t, l, host, setup+" -p "+s+"/a -s 2 -i 201 -m login01")
	for _, line := range []string{"Preparing storage target directory: " + s + "/a", " * Creating format.conf file...",
		" * Creating target numeric ID file: " + s + "/a/targetNumID", "Updating config file: " + cfg, " * Setting management host: login01",
		" * Appending to target directory list in config file...", "Found UUID " + disk.UUID, "All done."} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("first setup lacks %q:\n%s", line, out)
		}
	}
	mustExec(t, l, host, setup+" -p "+s+"/b")
	want := "sysMgmtdHost=login01\nstoreStorageDirectory=," + s + "/a ," + s + "/b\nstoreAllowFirstRunInit=false\nstoreFsUUID=," + disk.UUID + " ," + disk.UUID + "\n"
	if got := lists(); got != want {
		t.Errorf("after two setups:\n%swant:\n%s", got, want)
	}
	if got := mustExec(t, l, host, "cd "+s+"/a && ls && cat format.conf nodeNumID targetNumID"); got !=
		"buddymir\nchunks\nformat.conf\nnodeNumID\ntargetNumID\n# This file was auto-generated. Do not modify it!\nversion=3\n2\n201\n" {
		t.Errorf("target a holds:\n%s", got)
	}

	out, status := execStatus(t, l, host, setup+" -f -p "+s+"/a")
	if status != 0 || !strings.Contains(out, "Appending to target directory list") {
		t.Errorf("-f on a listed directory: status %d\n%s", status, out)
	}
	mustExec(t, l, host, "rm -rf "+s+"/a/* && sed -i 's|^storeStorageDirectory .*|storeStorageDirectory = ,"+s+"/a|; s|^storeFsUUID .*|storeFsUUID = ,"+disk.UUID+"|' "+cfg)
	out, status = execStatus(t, l, host, "rm -rf "+s+"/c; mkdir "+s+"/c && "+setup+" -p "+s+"/c -r")
	want = "sysMgmtdHost=login01\nstoreStorageDirectory=" + s + "/c\nstoreAllowFirstRunInit=false\nstoreFsUUID=," + disk.UUID + " ," + disk.UUID + "\n"
	if got := lists(); status != 0 || got != want {
		t.Errorf("-r: status %d, lists:\n%swant:\n%s%s", status, got, want, out)
	}
	before := lists()
	mustExec(t, l, host, setup+" -p "+s+"/d -u")
	if got := lists(); got != strings.Replace(before, "="+s+"/c", "="+s+"/c ,"+s+"/d", 1) {
		t.Errorf("-u changed more than the directory list:\n%s", got)
	}
	out, status = execStatus(t, l, host, setup+" -p "+s+"/c")
	if status != 1 || !strings.Contains(out, " * ERROR: Storage target directory is not empty. Initialization of non-empty directories can lead to data loss or orphaned data. ('-f' disables this check.)") {
		t.Errorf("setup of a non-empty directory: status %d\n%s", status, out)
	}
	out, status = execStatus(t, l, host, beegfs.SetupStorageTool+" -c "+s+"/none.conf -p "+s+"/e")
	if status != 1 || !strings.Contains(out, " * ERROR: Config file not found: "+s+"/none.conf") || !strings.Contains(mustExec(t, l, host, "ls "+s+"/e"), "format.conf") {
		t.Errorf("a missing config is refused after the directory is initialised: status %d\n%s", status, out)
	}
	out, status = execStatus(t, l, host, beegfs.SetupStorageTool+" -c "+cfg+" -q 2>&1")
	if status != 1 || !strings.Contains(out, "ERROR: Invalid argument\n") {
		t.Errorf("an unknown option: status %d\n%s", status, out)
	}
	out, status = execStatus(t, l, host, beegfs.SetupStorageTool+" -c "+cfg+" 2>&1 >/dev/null")
	if status != 1 || !strings.HasPrefix(out, "ERROR: Storage target directory is undefined.") {
		t.Errorf("no -p: status %d\n%s", status, out)
	}
}

// beegfs-setup-meta as the real script: format.conf version 4 with the xattr setting, the
// directory and the UUID replaced in the config (a single value), extended attributes set.
func TestLabStandInSetupMeta(t *testing.T) {
	l := lab.Require(t)
	host := lab.LoginHost
	s, disk := standInScratchOnDisk(t, l, host, "beegfs-meta")
	cfg := s + "/pkg" + beegfs.MetaConfPath
	mustExec(t, l, host, beegfs.SetupMetaTool+" -c "+cfg+" -p "+s+"/meta -s 1 -m 10.0.0.10 -x")
	got := mustExec(t, l, host, "cat "+s+"/meta/format.conf "+s+"/meta/nodeNumID; "+
		`sed -n 's/^\(storeMetaDirectory\|storeFsUUID\|storeAllowFirstRunInit\|sysMgmtdHost\|storeUseExtendedAttribs\) *= *\(.*\)$/\1=\2/p' `+cfg)
	want := "# This file was auto-generated. Do not modify it!\nversion=4\nxattr=false\n1\n" +
		"sysMgmtdHost=10.0.0.10\nstoreMetaDirectory=" + s + "/meta\nstoreAllowFirstRunInit=false\nstoreFsUUID=" + disk.UUID + "\nstoreUseExtendedAttribs=false\n"
	if got != want {
		t.Errorf("after beegfs-setup-meta:\n%swant:\n%s", got, want)
	}
	out, status := execStatus(t, l, host, beegfs.SetupMetaTool+" -c "+cfg+" -p "+s+"/meta")
	if status != 1 || !strings.Contains(out, " * ERROR: Storage directory is not empty. Initialization of non-empty directories can lead to data loss or orphaned data. ('-f' disables this check.)") {
		t.Errorf("second setup: status %d\n%s", status, out)
	}
}

// The storage daemon's checks, in the real order and words: each refusal ends the daemon
// with its "Error: ..." line and the version banner (exit 1) or "Unrecoverable error: ..."
// (exit 3), though systemctl start itself succeeded, as with the real Type=simple unit.
func TestLabStandInStorageDaemonChecks(t *testing.T) {
	l := lab.Require(t)
	host := l.HostsWithRole(lab.RoleGPU)[0].Name
	s, disk := standInScratchOnDisk(t, l, host, "beegfs-storage")
	cfg := s + "/pkg" + beegfs.StorageConfPath
	mustExec(t, l, host, beegfs.SetupStorageTool+" -c "+cfg+" -p "+s+"/good -s 3 -i 301 -m 10.0.0.10 >/dev/null && mkdir "+s+"/empty && head -c 3 /dev/urandom > "+s+"/short.auth")
	auth := "connAuthFile=" + s + "/conn.auth"
	tests := []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"no conn.auth", []string{"connAuthFile=" + s + "/none"}, 3, "Unrecoverable error: Unable to open auth file: " + s + "/none (SysErr: No such file or directory)"},
		{"no connAuthFile", []string{"connAuthFile="}, 3, "Unrecoverable error: No connAuthFile configured."},
		{"short conn.auth", []string{"connAuthFile=" + s + "/short.auth"}, 1, "Error: Auth file is empty: " + s + "/short.auth"},
		{"uninitialised target", []string{auth, "storeStorageDirectory=," + s + "/good," + s + "/empty"}, 1,
			"Error: Found uninitialized storage target directory and initialization has been disabled: " + s + "/empty"},
		{"lists of different sizes", []string{auth, "storeFsUUID=," + disk.UUID + "," + disk.UUID}, 1, "Error: Storage path list and storage UUID list have different sizes"},
		{"UUID of another filesystem", []string{auth, "storeFsUUID=00000000-0000-4000-8000-000000000000"}, 1,
			"Error: UUID of the file system under the storage target " + s + "/good (" + disk.UUID + ") does not match the one configured (00000000-0000-4000-8000-000000000000)"},
		{"no management host, an empty storeFsUUID is no check", []string{auth, "storeFsUUID=,", "sysMgmtdHost="}, 1, "Error: Management host undefined"},
		{"config file missing", []string{"cfgFile=" + s + "/none.conf"}, 1, "Error: Failed to load map file: " + s + "/none.conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit := daemonUnit(t, l, host, "beegfs-storage", cfg, tt.args...)
			state, status, journal := settle(t, l, host, unit, tt.want)
			if state != "failed" || status != tt.status || !strings.Contains("\n"+journal, "\n"+tt.want) {
				t.Errorf("state %s, status %d, journal:\n%s\nwant failed, status %d and %q", state, status, journal, tt.status, tt.want)
			}
			if tt.status == 1 && !strings.Contains(journal, "[BeeGFS Storage Node Version: 8.4.0\nRefer to the default config file (/etc/beegfs/beegfs-storage.conf)") {
				t.Errorf("no version banner:\n%s", journal)
			}
		})
	}
}

// standInMgmtd prepares the stand-in management service on login01 with a database of its
// own and returns the file of its shared secret and what starts it, as a transient unit.
func standInMgmtd(t *testing.T, l *lab.Lab) (authFile string, start func()) {
	t.Helper()
	s := standInScratch(t, l, lab.LoginHost, "beegfs-mgmtd")
	unit := fmt.Sprintf("standin-mgmtd-%d", time.Now().UnixNano())
	m := beegfs.MgmtdDaemon + " --config-file=" + s + "/pkg" + beegfs.MgmtdTOMLPath + " --db-file=" + s + "/mgmtd.sqlite --auth-file=" + s + "/conn.auth --tls-disable=true"
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), lab.LoginHost, "systemctl stop "+unit+" 2>/dev/null; systemctl reset-failed "+unit+" 2>/dev/null; true")
	})
	mustExec(t, l, lab.LoginHost, m+" --init >/dev/null")
	return s + "/conn.auth", func() { mustExec(t, l, lab.LoginHost, "systemd-run --quiet --unit="+unit+" --property=Type=notify "+m) }
}

// ask sends one message of the stand-in's protocol to addr with the secret of authFile's
// content (as the daemons prove it) and returns the reply's body, or its refusal.
func ask(t *testing.T, addr, msg string, secret []byte) (json.RawMessage, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := map[string]string{"msg": msg}
	if secret != nil {
		sum := sha256.Sum256(secret)
		req["auth"] = hex.EncodeToString(sum[:])
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	var rep struct {
		OK    bool            `json:"ok"`
		Error string          `json:"error"`
		Body  json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return nil, err
	}
	if !rep.OK {
		return nil, fmt.Errorf("%s", rep.Error)
	}
	return rep.Body, nil
}

// The daemons wait for the management service (active, forever) while it is down, then
// register: the storage daemon gets its node and target IDs, writes them and targetID, and 7.x
// string ID files become *.v7; the metadata daemon registers with its registrationToken. Both
// answer the mount's questions only with the shared secret, and stop on SIGTERM with the real
// lines. A metadata node whose token the management service does not know is refused: exit 1.
func TestLabStandInDaemonsRegister(t *testing.T) {
	l := lab.Require(t)
	gpu := l.HostsWithRole(lab.RoleGPU)[0]
	login := l.Host(lab.LoginHost)
	st := standInScratch(t, l, gpu.Name, "beegfs-storage")
	me := standInScratch(t, l, login.Name, "beegfs-meta")
	authFile, startMgmtd := standInMgmtd(t, l)
	encoded := mustExec(t, l, login.Name, "base64 -w0 < "+authFile)
	secret, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, l, gpu.Name, "echo "+encoded+" | base64 -d > "+st+"/conn.auth && "+
		beegfs.SetupStorageTool+" -c "+st+"/pkg"+beegfs.StorageConfPath+" -p "+st+"/target -m "+login.Address+" >/dev/null && "+
		"printf 'gpu-old\\n' > "+st+"/target/originalNodeID")
	mustExec(t, l, login.Name, "cp "+authFile+" "+me+"/conn.auth")
	storage := daemonUnit(t, l, gpu.Name, "beegfs-storage", st+"/pkg"+beegfs.StorageConfPath, "connAuthFile="+st+"/conn.auth")
	waiting := "Waiting for beegfs-mgmtd@" + login.Address + ":8008..."
	if state, _, journal := settle(t, l, gpu.Name, storage, waiting); state != "active" || !strings.Contains(journal, waiting) {
		t.Fatalf("with the management service down: %s\n%s", state, journal)
	}

	startMgmtd()
	if state, _, journal := settle(t, l, gpu.Name, storage, "Node registration successful."); state != "active" || !strings.Contains(journal, "Node registration successful.") {
		t.Fatalf("storage did not register: %s\n%s", state, journal)
	}
	files := mustExec(t, l, gpu.Name, "cd "+st+"/target && ls && cat nodeNumID targetNumID format.conf && head -n 3 originalNodeID.v7 && test -s targetID && cat lock.pid")
	if !strings.HasPrefix(files, "buddymir\nchunks\nformat.conf\nlock.pid\nnodeNumID\noriginalNodeID.v7\ntargetID\ntargetNumID\n1\n1\n# This file was auto-generated. Do not modify it!\nversion=3\n"+
		"gpu-old\n\n# String IDs have been deprecated starting with BeeGFS 8.\n") {
		t.Errorf("storage target after registration:\n%s", files)
	}
	nodes, err := ask(t, login.Address+":8008", "nodes", secret)
	if err != nil || !strings.Contains(string(nodes), `"type":"storage","id":1`) {
		t.Errorf("the management service's nodes: %s, %v", nodes, err)
	}
	if _, err := ask(t, gpu.Address+":8003", "statfs", secret); err != nil {
		t.Errorf("statfs with the secret: %v", err)
	}
	if _, err := ask(t, gpu.Address+":8003", "statfs", nil); err == nil {
		t.Error("statfs without the secret was answered")
	}

	mustExec(t, l, login.Name, beegfs.SetupMetaTool+" -c "+me+"/pkg"+beegfs.MetaConfPath+" -p "+me+"/meta -s 1 -m "+login.Address+" >/dev/null")
	meta := daemonUnit(t, l, login.Name, "beegfs-meta", me+"/pkg"+beegfs.MetaConfPath, "connAuthFile="+me+"/conn.auth")
	if state, _, journal := settle(t, l, login.Name, meta, "Node registration successful."); state != "active" || !strings.Contains(journal, "Node registration successful.") {
		t.Fatalf("meta did not register: %s\n%s", state, journal)
	}
	if got := mustExec(t, l, login.Name, "cd "+me+"/meta && ls && test -s registrationToken && echo token"); got != "buddymir\ndentries\nformat.conf\ninodes\nlock.pid\nnodeNumID\nregistrationToken\ntoken\n" {
		t.Errorf("meta directory after registration:\n%s", got)
	}
	if _, err := ask(t, login.Address+":8005", "stat-root", secret); err != nil {
		t.Errorf("stat-root with the secret: %v", err)
	}
	mustExec(t, l, login.Name, "systemctl stop "+meta)
	if got := mustExec(t, l, login.Name, "journalctl -q -o cat -u "+meta+" | grep -E 'Received a SIGTERM|All components stopped'"); got != "Main >> Received a SIGTERM. Shutting down...\nMain >> All components stopped. Exiting now!\n" {
		t.Errorf("stop lines:\n%s", got)
	}

	mustExec(t, l, login.Name, "echo 0-0-1 > "+me+"/meta/registrationToken")
	again := daemonUnit(t, l, login.Name, "beegfs-meta", me+"/pkg"+beegfs.MetaConfPath, "connAuthFile="+me+"/conn.auth")
	const refused = "Error: Pre-registration at management node canceled"
	if state, status, journal := settle(t, l, login.Name, again, refused); state != "failed" || status != 1 || !strings.Contains(journal, refused) {
		t.Errorf("meta with a foreign token: %s %d\n%s", state, status, journal)
	}
}
