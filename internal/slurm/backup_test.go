package slurm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// sandboxController runs the backup's scripts with this machine's sh, tar and gzip, and with
// systemctl, scontrol and mariadb-dump stand-ins that keep slurmctld's state in a file and log
// every call, so a test sees what ran and in which order.
type sandboxController struct {
	transporttest.Shell
	transporttest.Files
	dir    string
	locked int
}

func (s *sandboxController) Lock(context.Context) (func(), error) {
	s.locked++
	return func() { s.locked-- }, nil
}

const fakeSystemctl = `#!/bin/sh
echo "systemctl $*" >> "$SANDBOX/calls"
case "$1 $2" in
"is-active --quiet") [ -e "$SANDBOX/active" ] ;;
"stop slurmctld") rm -f "$SANDBOX/active" ;;
"start slurmctld") [ ! -e "$SANDBOX/fail-start" ] && touch "$SANDBOX/active" ;;
esac
`

const fakeDump = `#!/bin/sh
echo "mariadb-dump $*" >> "$SANDBOX/calls"
[ -e "$SANDBOX/active" ] && echo "dump while slurmctld runs" >> "$SANDBOX/calls"
[ ! -e "$SANDBOX/fail-dump" ] || exit 2
for a; do case "$a" in --result-file=*) printf 'CREATE DATABASE slurm_acct_db;\nINSERT job probe;\n' > "${a#--result-file=}" ;; esac; done
`

const fakeScontrol = `#!/bin/sh
[ -e "$SANDBOX/active" ] && echo "Slurmctld(primary) at login01 is UP"
`

func newBackupSandbox(t *testing.T, active bool) *sandboxController {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for name, text := range map[string]string{"systemctl": fakeSystemctl, "mariadb-dump": fakeDump, "scontrol": fakeScontrol} {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil { //nolint:gosec // G306: a stand-in program must be executable.
			t.Fatal(err)
		}
	}
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(state, "hash.3", "job.13"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"job_state", "node_state", "hash.3/job.13/script"} {
		if err := os.WriteFile(filepath.Join(state, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if active {
		if err := os.WriteFile(filepath.Join(dir, "active"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := &sandboxController{dir: dir}
	s.Rewrite = func(script string) string {
		return strings.Replace(script, "export LC_ALL=C PATH=", "export SANDBOX="+transport.Quote(dir)+" LC_ALL=C PATH="+transport.Quote(bin)+":", 1)
	}
	return s
}

func (s *sandboxController) backup(retention int, db string) Backup {
	return Backup{StateSaveLocation: filepath.Join(s.dir, "state"), Destination: filepath.Join(s.dir, "backups"), Retention: retention, Database: db}
}

func (s *sandboxController) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "calls"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

var backupTime = time.Date(2026, 12, 3, 17, 45, 0, 0, time.UTC)

// A backup stops slurmctld, archives StateSaveLocation and dumps the database while it is
// stopped, starts it again and waits for it, all under the controller's lock.
func TestTakeBackup_stateAndDatabase(t *testing.T) {
	s := newBackupSandbox(t, true)
	b := s.backup(7, "slurm_acct_db")
	got, err := TakeBackup(context.Background(), s, b, backupTime, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := b.Destination + "/slurm-backup-20261203T174500Z"
	if !reflect.DeepEqual(got, []string{want}) {
		t.Fatalf("backups = %q, want [%s]", got, want)
	}
	if files := entries(t, want); !reflect.DeepEqual(files, []string{"slurm_acct_db" + DumpSuffix, StateArchive}) {
		t.Errorf("the backup holds %q", files)
	}
	archived, err := exec.Command("tar", "-tzf", filepath.Join(want, StateArchive)).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"./job_state", "./node_state", "./hash.3/job.13/script"} {
		if !strings.Contains(string(archived), f+"\n") {
			t.Errorf("the archive lacks %s:\n%s", f, archived)
		}
	}
	dump, err := exec.Command("gzip", "-dc", filepath.Join(want, "slurm_acct_db"+DumpSuffix)).Output()
	if err != nil || !strings.Contains(string(dump), "INSERT job probe") {
		t.Errorf("the dump: %q, %v", dump, err)
	}
	wantCalls := []string{
		"systemctl is-active --quiet slurmctld", "systemctl stop slurmctld",
		"mariadb-dump --single-transaction --databases slurm_acct_db --result-file=" + b.Destination + "/.slurm-backup-20261203T174500Z.partial/slurm_acct_db.sql",
		"systemctl start slurmctld", "systemctl is-active --quiet slurmctld",
	}
	if calls := s.calls(t); !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	if info, err := os.Stat(want); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the backup's mode: %v, %v; want 0700", info.Mode(), err)
	}
	if s.locked != 0 {
		t.Errorf("the lock is held %d times after the backup", s.locked)
	}
}

// A failed dump leaves no backup under a final name, and slurmctld running again.
func TestTakeBackup_failureLeavesNoBackupAndSlurmctldRunning(t *testing.T) {
	s := newBackupSandbox(t, true)
	if err := os.WriteFile(filepath.Join(s.dir, "fail-dump"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b := s.backup(7, "slurm_acct_db")
	if _, err := TakeBackup(context.Background(), s, b, backupTime, time.Second); err == nil {
		t.Fatal("a failed dump was reported as a backup")
	}
	if names := entries(t, b.Destination); len(names) != 0 {
		t.Errorf("after a failed backup the destination holds %q", names)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "active")); err != nil {
		t.Errorf("slurmctld does not run after a failed backup: %v", err)
	}
}

// Without a database and with slurmctld stopped, only the state is archived and slurmctld is
// left stopped.
func TestTakeBackup_stoppedControllerStateOnly(t *testing.T) {
	s := newBackupSandbox(t, false)
	b := s.backup(7, "")
	got, err := TakeBackup(context.Background(), s, b, backupTime, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if files := entries(t, got[0]); !reflect.DeepEqual(files, []string{StateArchive}) {
		t.Errorf("the backup holds %q", files)
	}
	if calls := s.calls(t); !reflect.DeepEqual(calls, []string{"systemctl is-active --quiet slurmctld", "systemctl is-active --quiet slurmctld"}) {
		t.Errorf("calls: %q", calls)
	}
}

// The retention keeps the newest backups, removes a partial one left by a backup cut short,
// and leaves everything else in the destination alone.
func TestTakeBackup_retention(t *testing.T) {
	s := newBackupSandbox(t, true)
	b := s.backup(2, "")
	for _, d := range []string{"slurm-backup-20261201T000000Z", "slurm-backup-20261202T000000Z", ".slurm-backup-20261202T120000Z.partial", "keep-me", "slurm-backup-notes"} {
		if err := os.MkdirAll(filepath.Join(b.Destination, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got, err := TakeBackup(context.Background(), s, b, backupTime, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{b.Destination + "/slurm-backup-20261202T000000Z", b.Destination + "/slurm-backup-20261203T174500Z"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("backups = %q, want %q", got, want)
	}
	if names := entries(t, b.Destination); !reflect.DeepEqual(names, []string{"keep-me", "slurm-backup-20261202T000000Z", "slurm-backup-20261203T174500Z", "slurm-backup-notes"}) {
		t.Errorf("the destination holds %q", names)
	}
	listed, err := ListBackups(context.Background(), s, b.Destination)
	if err != nil || !reflect.DeepEqual(listed, want) {
		t.Errorf("ListBackups = %q, %v; want %q", listed, err, want)
	}
}

// A backup of the same second is refused rather than mixed into the one there.
func TestTakeBackup_sameNameRefused(t *testing.T) {
	s := newBackupSandbox(t, true)
	b := s.backup(7, "")
	if _, err := TakeBackup(context.Background(), s, b, backupTime, time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := TakeBackup(context.Background(), s, b, backupTime, time.Second)
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("err = %v, want the existing backup refused", err)
	}
}

func TestListBackups_missingDestination(t *testing.T) {
	s := newBackupSandbox(t, true)
	got, err := ListBackups(context.Background(), s, filepath.Join(s.dir, "none"))
	if err != nil || len(got) != 0 {
		t.Errorf("ListBackups = %q, %v; want none", got, err)
	}
}

func TestBackupValidate(t *testing.T) {
	good := Backup{StateSaveLocation: "/var/spool/slurmctld", Destination: "/var/backups/slurm", Retention: 7, Database: "slurm_acct_db"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Backup){
		"relative":          func(b *Backup) { b.Destination = "backups" },
		"trailing slash":    func(b *Backup) { b.Destination = "/var/backups/" },
		"dot dot":           func(b *Backup) { b.Destination = "/var/backups/../etc" },
		"space":             func(b *Backup) { b.Destination = "/var/my backups" },
		"quote":             func(b *Backup) { b.Destination = "/var/b'x" },
		"root":              func(b *Backup) { b.Destination = "/" },
		"system":            func(b *Backup) { b.Destination = "/etc" },
		"inside state":      func(b *Backup) { b.Destination = "/var/spool/slurmctld/backups" },
		"holding the state": func(b *Backup) { b.Destination = "/var/spool" },
		"retention":         func(b *Backup) { b.Retention = 0 },
		"database":          func(b *Backup) { b.Database = "acct; DROP" },
	} {
		b := good
		change(&b)
		if err := b.Validate(); err == nil {
			t.Errorf("%s: %+v was accepted", name, b)
		}
	}
}
