package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestCheckDatabaseUserName(t *testing.T) {
	for _, name := range []string{"root", "Root", "mysql", "mariadb.sys", "debian-sys-maint", "PUBLIC", "public"} {
		if err := CheckDatabaseUserName(name); err == nil {
			t.Errorf("%q was accepted", name)
		}
	}
	for _, name := range []string{"slurm", "slurm_acct", "rooted"} {
		if err := CheckDatabaseUserName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestPlanDatabaseUser(t *testing.T) {
	foreign := DatabaseUser{Name: "tacc", Answered: true, Installed: true, Hosts: []string{"localhost"}}
	opens := foreign
	opens.LoginWorks = true
	for _, tt := range []struct {
		name   string
		user   DatabaseUser
		policy DatabaseUserPolicy
		want   databaseUserSteps
		err    string
	}{
		{"new", DatabaseUser{Name: "slurm", Answered: true}, DatabaseUserPolicy{}, databaseUserSteps{record: true, create: true}, ""},
		{"recorded, dropped by hand", DatabaseUser{Name: "slurm", Answered: true, Created: true}, DatabaseUserPolicy{}, databaseUserSteps{create: true}, ""},
		{"its own", DatabaseUser{Name: "slurm", Answered: true, Created: true, Hosts: []string{"localhost"}}, DatabaseUserPolicy{}, databaseUserSteps{create: true}, ""},
		{"made by hand", foreign, DatabaseUserPolicy{}, databaseUserSteps{}, "MariaDB already has 'tacc'@'localhost', and " + DatabaseUsersPath + " does not list it"},
		{"made by hand, rotation of a new resource", opens, DatabaseUserPolicy{Rotate: true}, databaseUserSteps{}, "the provider did not create it"},
		{"imported", opens, DatabaseUserPolicy{Adopted: true}, databaseUserSteps{}, ""},
		{"imported, other password", foreign, DatabaseUserPolicy{Adopted: true}, databaseUserSteps{}, "the database password does not open the account 'tacc'@'localhost'"},
		{"imported, rotated", foreign, DatabaseUserPolicy{Adopted: true, Rotate: true}, databaseUserSteps{alter: true}, ""},
	} {
		got, err := planDatabaseUser(tt.user, tt.policy)
		switch {
		case tt.err == "" && err != nil, tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		case got != tt.want:
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// mysqlStandIn answers as MariaDB's client would: accounts are "NAME HOST" lines of
// $SANDBOX/accounts and passwords in $SANDBOX/pw-NAME; the SQL it runs is appended to
// $SANDBOX/sql, after whether the list of created users named anyone at that moment.
const mysqlStandIn = `#!/bin/sh
[ -e "$SANDBOX/down" ] && { echo "ERROR 2002 (HY000): Can't connect to local server through socket" >&2; exit 1; }
case "$1" in
--defaults-extra-file=*) [ -e "$SANDBOX/pw-$3" ] && grep -qxF "password=$(cat "$SANDBOX/pw-$3")" "${1#*=}"; exit ;;
--batch) { echo "list: $(grep -v '^#' "$SANDBOX/lib/mariadb-users" 2>/dev/null)"; cat; } >> "$SANDBOX/sql"; exit ;;
-N) u=$(printf '%s' "$4" | sed -n "s/.*User = '\([^']*\)'.*/\1/p"); awk -v u="$u" '$1 == u { print $2 }' "$SANDBOX/accounts" 2>/dev/null; exit 0 ;;
esac
exit 9
`

type databaseSandbox struct {
	root  string
	shell transporttest.Shell
}

func newDatabaseSandbox(t *testing.T) databaseSandbox {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "mysql"), []byte(mysqlStandIn), 0o755); err != nil { //nolint:gosec // G306: the stand-in must be executable.
		t.Fatal(err)
	}
	return databaseSandbox{root: root, shell: transporttest.Shell{Rewrite: func(script string) string {
		script = strings.ReplaceAll(script, transport.ScriptEnv, "set -u\nexport SANDBOX="+root+" PATH="+bin+":/usr/bin:/bin\n")
		script = strings.ReplaceAll(script, "-o root -g root ", "")
		return strings.ReplaceAll(script, "/var/lib/gpucluster", root+"/lib")
	}}}
}

func (s databaseSandbox) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.root, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s databaseSandbox) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.root, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// The user the provider creates is in the list before MariaDB is asked to create it, and the
// list then tells it from an account made by hand, which is refused without any SQL.
func TestEnsureDatabaseRecordsBeforeCreating(t *testing.T) {
	ctx := context.Background()
	s := newDatabaseSandbox(t)
	d := Slurmdbd{DbdHost: "login01", DbdPort: DefaultDbdPort, SlurmUser: "slurm", Database: "slurm_acct_db", DatabaseUser: "slurm"}
	pw := []byte("a-good-password-1")
	steps, err := readDatabaseUserSteps(ctx, s.shell, d, pw, DatabaseUserPolicy{})
	if err != nil || steps != (databaseUserSteps{record: true, create: true}) {
		t.Fatalf("new user: %+v, %v", steps, err)
	}
	if err := ensureDatabase(ctx, s.shell, d, pw, steps); err != nil {
		t.Fatal(err)
	}
	sql := s.read(t, "sql")
	if !strings.HasPrefix(sql, "list: slurm\n") || !strings.Contains(sql, "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'a-good-password-1';") {
		t.Errorf("the SQL did not run after the list named slurm:\n%s", sql)
	}
	for file, mode := range map[string]os.FileMode{"lib": os.ModeDir | 0o755, "lib/mariadb-users": 0o644} {
		if fi, err := os.Stat(filepath.Join(s.root, file)); err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", file, fi.Mode(), err, mode)
		}
	}
	if list := s.read(t, "lib/mariadb-users"); list != databaseUsersHeader+"slurm\n" {
		t.Errorf("list:\n%s", list)
	}

	s.write(t, "accounts", "slurm localhost\ntacc %\ntacc localhost\n")
	if u, err := ReadDatabaseUser(ctx, s.shell, "slurm", nil); err != nil || !u.Created || !u.Exists() || u.Foreign() {
		t.Errorf("the provider's own user: %+v, %v", u, err)
	}
	d.DatabaseUser = "tacc"
	_, err = readDatabaseUserSteps(ctx, s.shell, d, pw, DatabaseUserPolicy{})
	var foreign *ForeignDatabaseUserError
	if !errors.As(err, &foreign) || foreign.User.Accounts() != "'tacc'@'%', 'tacc'@'localhost'" {
		t.Errorf("an account made by hand: %v", err)
	}
	if _, err := readDatabaseUserSteps(ctx, s.shell, d, pw, DatabaseUserPolicy{Adopted: true}); !errors.Is(err, ErrDatabasePasswordRefused) {
		t.Errorf("an imported account with another password: %v", err)
	}
	s.write(t, "pw-tacc", string(pw))
	if steps, err := readDatabaseUserSteps(ctx, s.shell, d, pw, DatabaseUserPolicy{Adopted: true}); err != nil || steps != (databaseUserSteps{}) {
		t.Errorf("an imported account that the password opens: %+v, %v", steps, err)
	}
	if got := string(databaseSQL(d, pw, databaseUserSteps{})); got != "CREATE DATABASE IF NOT EXISTS `slurm_acct_db`;\n" {
		t.Errorf("SQL for an imported account:\n%s", got)
	}
	if got := string(databaseSQL(d, pw, databaseUserSteps{alter: true})); strings.Contains(got, "CREATE USER") || strings.Contains(got, "GRANT") ||
		!strings.Contains(got, "ALTER USER 'tacc'@'localhost' IDENTIFIED BY 'a-good-password-1';") {
		t.Errorf("SQL of a rotation of an imported account:\n%s", got)
	}
	if sql != s.read(t, "sql") {
		t.Errorf("a refused or unchanged account ran SQL:\n%s", s.read(t, "sql"))
	}
}

// A node without MariaDB answers that it has no account; a MariaDB that does not run gives no
// answer, with its client's message.
func TestReadDatabaseUserWithoutMariaDB(t *testing.T) {
	ctx := context.Background()
	s := newDatabaseSandbox(t)
	s.write(t, "down", "")
	u, err := ReadDatabaseUser(ctx, s.shell, "slurm", nil)
	if err != nil || u.Answered || !u.Installed || !strings.Contains(u.Problem, "Can't connect to local server") {
		t.Errorf("stopped: %+v, %v", u, err)
	}
	if err := os.Remove(filepath.Join(s.root, "bin", "mysql")); err != nil {
		t.Fatal(err)
	}
	u, err = ReadDatabaseUser(ctx, s.shell, "slurm", nil)
	if err != nil || !u.Answered || u.Installed || u.Exists() {
		t.Errorf("not installed: %+v, %v", u, err)
	}
	if _, err := ReadDatabaseUser(ctx, s.shell, "x'; DROP", nil); err == nil {
		t.Error("a name that is not an SQL name was read")
	}
}
