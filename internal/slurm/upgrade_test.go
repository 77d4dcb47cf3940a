package slurm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units/unitstest"
)

func TestRelease(t *testing.T) {
	for in, want := range map[string]string{"24.11.5-4+deb13u1": "24.11", "1:23.02.7-1": "23.02", "26.05.1-1": "26.05", "27.11.0": "27.11"} {
		if got, err := Release(in); err != nil || got != want {
			t.Errorf("Release(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"24", "24.06.1-1", "9.05.1", "25.06.0"} {
		if got, err := Release(bad); err == nil {
			t.Errorf("Release(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReleaseOrder(t *testing.T) {
	for i := 0; i < len(knownReleases)+6; i++ {
		r := releaseAt(i)
		if got, err := releaseIndex(r); err != nil || got != i {
			t.Errorf("releaseIndex(releaseAt(%d) = %q) = %d, %v", i, r, got, err)
		}
	}
}

func TestCheckUpgrade(t *testing.T) {
	allowed := [][2]string{
		{"", "24.11.5-4+deb13u1"},
		{"24.11.5-4+deb13u1", "24.11.5-4+deb13u1"},
		{"24.11.5-4+deb13u1", "24.11.5-4+deb13u1+gpucluster1"},
		{"24.11.5-4", "25.05.0-1"},
		{"24.05.4-1", "25.05.0-1"},
		{"25.05.2-1", "25.11.0-1"},
		{"25.11.0-1", "26.05.1-1"},
		{"23.02.7-1", "24.05.1-1"},
	}
	for _, p := range allowed {
		if err := CheckUpgrade(p[0], p[1]); err != nil {
			t.Errorf("CheckUpgrade(%q, %q) = %v", p[0], p[1], err)
		}
	}
	refused := []struct{ from, to, want string }{
		{"23.11.4-1", "25.05.0-1", "25.05.0-1 (release 25.05) is 3 major releases after the installed 23.11.4-1 (release 23.11); Slurm upgrades across at most 2 at once: upgrade to release 24.11 first"},
		{"24.11.5-4", "26.05.1-1", "is 3 major releases after the installed 24.11.5-4 (release 24.11)"},
		{"25.05.0-1", "26.11.0-1", "upgrade to release 26.05 first"},
		{"24.11.5-4+deb13u1", "24.11.4-1", "24.11.4-1 is older than the installed 24.11.5-4+deb13u1: Slurm cannot be downgraded"},
		{"25.05.0-1", "24.11.5-4", "cannot be downgraded"},
		{"24.11.5-4", "26.02.1-1", "26.02 is not a Slurm major release"},
	}
	for _, tt := range refused {
		if err := CheckUpgrade(tt.from, tt.to); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckUpgrade(%q, %q) = %v, want %q", tt.from, tt.to, err, tt.want)
		}
	}
}

const (
	buildA = "24.11.5-4+deb13u1"
	buildB = "24.11.5-4+deb13u1+gpucluster1"
)

// controllerWithAccounting is dpkg-query's answer on a controller that runs slurmdbd too.
const controllerWithAccounting = "slurmdbd\tii \t" + buildA + "\nslurmctld\tii \t" + buildA + "\nslurm-client\tii \t" + buildA +
	"\nslurm-wlm-basic-plugins\tii \t" + buildA + "\nslurm-wlm-mysql-plugin\tii \t" + buildA + "\n"

// dpkg is the host's shared read with dpkg-query's answer about the Slurm packages, of which
// some are always missing: dpkg-query exits with status 1.
func dpkg(lines string) transporttest.Reply {
	return transporttest.Reply{Stdout: unitstest.OutWithPackages(slurmdService, units.State{Active: "inactive", Enabled: "not-found"}, lines, 1)}
}

func TestUpgradeNodeOrder(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		dpkg(controllerWithAccounting),
		{Stdout: "slurmdbd\nslurmctld\n"},
		slurmdbdConf,
		{Stdout: BackupDir + "/slurmdbd-slurm_acct_db-20261203T174500.000000000Z.sql.gz\n"},
		{}, // stop slurmctld
		{Stdout: BackupDir + "/slurmctld-state-20261203T174500.000000000Z.tar.gz\n"},
		{}, // apt
		{}, // restart slurmdbd
		{}, // restart slurmctld
		{Stdout: "Slurmctld(primary) at login01 is UP\n"},
	}}
	res, err := UpgradeNode(context.Background(), f, NodeUpgrade{Version: buildB, Packages: []string{"slurmctld", "slurm-client"}, StateSaveLocation: "/var/spool/slurmctld", Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"slurmdbd", "slurmctld"}; !reflect.DeepEqual(res.Restarted, want) {
		t.Errorf("restarted %v, want %v", res.Restarted, want)
	}
	if !strings.HasPrefix(res.Backup, BackupDir+"/slurmctld-state-") || !strings.HasPrefix(res.DatabaseDump, BackupDir+"/slurmdbd-slurm_acct_db-") {
		t.Errorf("backup %q, dump %q", res.Backup, res.DatabaseDump)
	}
	s := f.Scripts()
	steps := []struct {
		i    int
		want string
	}{
		{2, "grep -v -i '^[[:space:]]*StoragePass'"},
		{3, "db=slurm_acct_db\n"},
		{3, "--single-transaction --databases \"$db\""},
		{4, "systemctl stop slurmctld"},
		{5, "tar -C \"$d\""},
		{6, "'slurm-client=" + buildB + "' 'slurm-wlm-basic-plugins=" + buildB + "' 'slurm-wlm-mysql-plugin=" + buildB + "' 'slurmctld=" + buildB + "' 'slurmdbd=" + buildB + "'"},
		{7, "d=slurmdbd\n"},
		{8, "d=slurmctld\n"},
		{9, "scontrol ping"},
	}
	for _, st := range steps {
		if !strings.Contains(s[st.i], st.want) {
			t.Errorf("step %d lacks %q:\n%s", st.i, st.want, s[st.i])
		}
	}
}

func TestUpgradeNodeAtVersionChangesNothing(t *testing.T) {
	at := strings.ReplaceAll(controllerWithAccounting, buildA, buildB)
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{dpkg(at)}}
	res, err := UpgradeNode(context.Background(), f, NodeUpgrade{Version: buildB, Packages: []string{"slurmctld", "slurm-client"}, StateSaveLocation: "/var/spool/slurmctld"})
	if err != nil || len(res.Installed) != 0 || len(f.Calls) != 1 {
		t.Fatalf("got %+v, %v after %q; want only the query", res, err, f.Scripts())
	}
}

// TestUpgradeNodeFreshInstall installs a compute node's packages at the pin, with no backup
// and no restart: nothing ran before.
func TestUpgradeNodeFreshInstall(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{dpkg(""), {}, {}}}
	res, err := UpgradeNode(context.Background(), f, NodeUpgrade{Version: buildA, Packages: []string{"slurmd", "slurm-client"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"slurm-client", "slurm-wlm-basic-plugins", "slurmd"}; !reflect.DeepEqual(res.Installed, want) || res.Backup != "" || len(res.Restarted) != 0 {
		t.Errorf("got %+v, want %v installed, no backup, no restart", res, want)
	}
}

func TestUpgradeNodeStopsWhenBackupFails(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		dpkg(controllerWithAccounting),
		{Stdout: "slurmctld\n"},
		slurmdbdConf,
		{Stdout: BackupDir + "/slurmdbd-slurm_acct_db-20261203T174500.000000000Z.sql.gz\n"},
		{},
		{Err: &transport.ExitError{Host: "login01", Status: 1, Stderr: "/var/spool/slurmctld is not a directory"}},
	}}
	_, err := UpgradeNode(context.Background(), f, NodeUpgrade{Version: buildB, Packages: []string{"slurmctld"}, StateSaveLocation: "/var/spool/slurmctld"})
	if err == nil || !strings.Contains(err.Error(), "back up StateSaveLocation /var/spool/slurmctld") {
		t.Fatalf("got %v, want the backup's error", err)
	}
	for _, s := range f.Scripts() {
		if strings.Contains(s, "apt-get") {
			t.Errorf("apt ran after the backup failed:\n%s", s)
		}
	}
}

// slurmdbdConf is the node's slurmdbd.conf as ReadSlurmdbdSettings reads it.
var slurmdbdConf = transporttest.Reply{Stdout: "found\nDbdHost=login01\nStorageLoc=slurm_acct_db\n"}

// TestUpgradeNodeStopsWhenDumpFails stops the upgrade of a node running slurmdbd when the dump
// of the accounting database fails: slurmctld keeps running and no package is installed.
func TestUpgradeNodeStopsWhenDumpFails(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		dpkg(controllerWithAccounting),
		{Stdout: "slurmdbd\nslurmctld\n"},
		slurmdbdConf,
		{Err: &transport.ExitError{Host: "login01", Status: 2, Stderr: "mariadb-dump: Got error: 2002: Can't connect to local server"}},
	}}
	res, err := UpgradeNode(context.Background(), f, NodeUpgrade{Version: buildB, Packages: []string{"slurmctld", "slurm-client"}, StateSaveLocation: "/var/spool/slurmctld"})
	if !errors.Is(err, ErrAccountingDump) || !strings.Contains(err.Error(), "Can't connect to local server") {
		t.Fatalf("got %v, want the dump's error", err)
	}
	if len(f.Calls) != 4 || res.DatabaseDump != "" || res.Backup != "" {
		t.Errorf("after the failed dump: %+v, scripts %q; want nothing more", res, f.Scripts())
	}
}

// TestAccountingDumpScriptRuns runs the dump script in a real shell with a stand-in
// mariadb-dump and the backup directory moved into the test's own: one gzipped file, root's
// alone, and no temporary directory left.
func TestAccountingDumpScriptRuns(t *testing.T) {
	bin, out := t.TempDir(), t.TempDir()
	stub := "#!/bin/sh\nfor a; do case $a in --result-file=*) echo 'CREATE TABLE `c_job_table`' >\"${a#--result-file=}\";; esac; done\n"
	if err := os.WriteFile(filepath.Join(bin, "mariadb-dump"), []byte(stub), 0o755); err != nil { //nolint:gosec // G306: a stand-in program must be executable.
		t.Fatal(err)
	}
	script := strings.ReplaceAll(accountingDumpScript("slurm_acct_db"), "b="+transport.Quote(BackupDir), "b="+transport.Quote(out))
	script = strings.Replace(script, "PATH=", "PATH="+transport.Quote(bin)+":", 1)
	res, err := (transporttest.Shell{}).Sudo(context.Background(), script, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSpace(string(res.Stdout))
	if files := entries(t, out); !strings.HasPrefix(path, out+"/slurmdbd-slurm_acct_db-") || len(files) != 1 || out+"/"+files[0] != path {
		t.Fatalf("dump %q, %s holds %q", path, out, files)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("dump mode %v, %v; want 0600", info.Mode(), err)
	}
	if dump, err := exec.Command("gzip", "-dc", path).Output(); err != nil || !strings.Contains(string(dump), "CREATE TABLE `c_job_table`") {
		t.Errorf("the dump: %q, %v", dump, err)
	}
}

// TestBackupStateSaveLocationRuns runs the backup script in a real shell on a directory of
// this machine, with the backup directory moved into the test's own.
func TestBackupStateSaveLocationRuns(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	script := strings.ReplaceAll(upgradeBackupScript(dir), "b="+transport.Quote(BackupDir), "b="+transport.Quote(out))
	res, err := (transporttest.Shell{}).Sudo(context.Background(), "touch "+transport.Quote(dir+"/job_state")+"\n"+script, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSpace(string(res.Stdout))
	if mode, err := (transporttest.Shell{}).Sudo(context.Background(), "stat -c %a "+transport.Quote(path)+"\n", nil); err != nil || strings.TrimSpace(string(mode.Stdout)) != "600" {
		t.Errorf("backup mode %q, %v; want 600: the state holds job scripts", mode.Stdout, err)
	}
	list, err := (transporttest.Shell{}).Sudo(context.Background(), "tar -tzf "+transport.Quote(path)+"\n", nil)
	if err != nil || !strings.Contains(string(list.Stdout), "./job_state") || !strings.HasPrefix(path, out+"/slurmctld-state-") {
		t.Fatalf("backup %q lists %q, %v", path, list.Stdout, err)
	}
}

func TestCheckControllerFirst(t *testing.T) {
	tests := []struct {
		name, ctl  string
		wantBehind bool
	}{
		{"same build", "slurmctld\tii \t" + buildB + "\n", false},
		{"controller newer", "slurmctld\tii \t25.05.1-1\n", false},
		{"controller older", "slurmctld\tii \t" + buildA + "\n", true},
		{"no slurmctld", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{dpkg(tt.ctl)}}
			got := CheckControllerFirst(context.Background(), f, buildB)
			if behind := errors.Is(got, ErrControllerBehind); behind != tt.wantBehind || (!tt.wantBehind && got != nil) {
				t.Errorf("CheckControllerFirst = %v, want behind=%v", got, tt.wantBehind)
			}
		})
	}
}

func TestInstalledFamilyVersion(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{dpkg("slurmctld\tii \t" + buildA + "\n"), dpkg("")}}
	if v, err := InstalledFamilyVersion(context.Background(), f); err != nil || v != buildA {
		t.Errorf("controller: %q, %v; want %q", v, err, buildA)
	}
	if v, err := InstalledFamilyVersion(context.Background(), f); err != nil || v != "" {
		t.Errorf("bare node: %q, %v; want none", v, err)
	}
}

// TestUpgradeNodeAddsSlurmdbdBesideSlurmctld installs slurmdbd at the controller's version:
// slurmctld's files stay, so it is neither stopped nor restarted.
func TestUpgradeNodeAddsSlurmdbdBesideSlurmctld(t *testing.T) {
	controller := "slurmctld\tii \t" + buildA + "\nslurm-client\tii \t" + buildA + "\nslurm-wlm-basic-plugins\tii \t" + buildA + "\n"
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{dpkg(controller), {Stdout: "slurmctld\n"}, {}}}
	res, err := UpgradeNode(context.Background(), f, NodeUpgrade{Version: buildA, Packages: []string{"slurmdbd", ClientPackage}, StateSaveLocation: "/var/spool/slurmctld"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"slurm-wlm-mysql-plugin", "slurmdbd"}; !reflect.DeepEqual(res.Installed, want) || res.Backup != "" || len(res.Restarted) != 0 {
		t.Errorf("got %+v, want %v installed, no backup, no restart", res, want)
	}
}
