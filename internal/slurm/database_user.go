package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// DatabaseUsersPath lists, one name a line, the MariaDB users gpucluster_slurm_accounting
// created on this node. An account that is not listed was there before (MariaDB's own, or made
// by hand), and the provider never changes it unless an import handed it over.
const DatabaseUsersPath = transport.StateDir + "/mariadb-users"

const databaseUsersHeader = "# MariaDB users that gpucluster_slurm_accounting created on this node. Managed by Terraform: an account not listed here is never changed by it.\n"

// BuiltinDatabaseUsers are the accounts MariaDB sets up itself: Debian's mariadb-server creates
// root, mysql and mariadb.sys at install, older Debian releases debian-sys-maint, and MariaDB
// 10.11 and later know the PUBLIC role. slurmdbd must never use one: setting root's password
// locks MariaDB's administration out of its unix socket login.
var BuiltinDatabaseUsers = []string{"root", "mysql", "mariadb.sys", "debian-sys-maint", "PUBLIC"}

// ErrReservedDatabaseUser is one of BuiltinDatabaseUsers named as slurmdbd's database user.
var ErrReservedDatabaseUser = errors.New("one of the accounts MariaDB sets up itself")

// CheckDatabaseUserName refuses one of MariaDB's own accounts, in any case.
func CheckDatabaseUserName(name string) error {
	if slices.ContainsFunc(BuiltinDatabaseUsers, func(b string) bool { return strings.EqualFold(b, name) }) {
		return fmt.Errorf("%q is %w (%s); slurmdbd needs an account of its own, such as slurm",
			name, ErrReservedDatabaseUser, strings.Join(BuiltinDatabaseUsers, ", "))
	}
	return nil
}

// DatabaseUser is what a node's MariaDB holds of a user name.
type DatabaseUser struct {
	Name string
	// Answered: the node answered the question: MariaDB holds Hosts, or is not installed and
	// holds no account yet. It does not when MariaDB does not run; Problem is then mysql's
	// own message.
	Answered bool
	Problem  string
	// Installed: the mysql client is on the node.
	Installed bool
	// Hosts are the accounts of that name, by their host part ("localhost").
	Hosts []string
	// Created: DatabaseUsersPath lists the name.
	Created bool
	// LoginWorks: the password given to ReadDatabaseUser opens the account from localhost.
	LoginWorks bool
}

// Exists tells that MariaDB has an account of this name.
func (u DatabaseUser) Exists() bool { return len(u.Hosts) > 0 }

// Foreign tells that MariaDB has an account of this name that the provider did not create.
func (u DatabaseUser) Foreign() bool { return u.Exists() && !u.Created }

// Accounts names the accounts as MariaDB writes them: 'slurm'@'localhost'.
func (u DatabaseUser) Accounts() string {
	out := make([]string, len(u.Hosts))
	for i, h := range u.Hosts {
		out[i] = "'" + u.Name + "'@'" + h + "'"
	}
	return strings.Join(out, ", ")
}

// ForeignDatabaseUserError is an existing MariaDB account that the provider did not create.
type ForeignDatabaseUserError struct{ User DatabaseUser }

func (e *ForeignDatabaseUserError) Error() string {
	return fmt.Sprintf("MariaDB already has %s, and %s does not list it: the provider did not create it and does not change it", e.User.Accounts(), DatabaseUsersPath)
}

// ErrDatabasePasswordRefused is a password that does not open an account the provider did
// not create, which it therefore does not set.
var ErrDatabasePasswordRefused = errors.New("the database password does not open the account")

const mysqlNotInstalled = 3

// readDatabaseUserScript reads the list of created users and MariaDB's accounts of that name,
// and with login set tries the password that arrives on stdin, which stays out of every
// command line and file but a temporary one only root can read.
func readDatabaseUserScript(name string, login bool) string {
	s := transport.NewScript().Set("name", name).Set("list", DatabaseUsersPath).
		Set("query", "SELECT Host FROM mysql.user WHERE User = '"+name+"' ORDER BY Host")
	s.Set("not_installed", fmt.Sprint(mysqlNotInstalled)).Text(transport.SectionFuncs + readDatabaseUserText)
	if login {
		s.Text(databaseLoginText)
	}
	return s.String()
}

//go:embed database_user_read.sh
var readDatabaseUserText string

//go:embed database_user_login.sh
var databaseLoginText string

// ReadDatabaseUser reads what the node's MariaDB holds of the user name, and whether the
// provider created it. With a password, it also tries whether that opens the account.
func ReadDatabaseUser(ctx context.Context, ex transport.Executor, name string, password []byte) (DatabaseUser, error) {
	if !SQLNamePattern.MatchString(name) {
		return DatabaseUser{}, fmt.Errorf("database user %q: use letters, digits and '_', at most 32", name)
	}
	var res transport.Result
	var err error
	if password != nil {
		res, err = ex.Sudo(ctx, readDatabaseUserScript(name, true), password)
	} else {
		res, err = ex.Read(ctx, readDatabaseUserScript(name, false))
	}
	if err != nil {
		return DatabaseUser{}, fmt.Errorf("read MariaDB's accounts named %s: %w", name, err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return DatabaseUser{}, fmt.Errorf("read MariaDB's accounts named %s: %w", name, err)
	}
	hosts := sections["hosts"]
	u := DatabaseUser{
		Name:       name,
		Created:    strings.Join(sections["created"].Lines, "") != "0",
		Installed:  hosts.Status != mysqlNotInstalled,
		Answered:   hosts.Status == 0 || hosts.Status == mysqlNotInstalled,
		LoginWorks: password != nil && sections["login"].Status == 0,
	}
	if !u.Answered {
		u.Problem = strings.TrimSpace(strings.Join(hosts.Lines, "\n"))
		return u, nil
	}
	for _, h := range hosts.Lines {
		if h = strings.TrimSpace(h); h != "" && hosts.Status == 0 {
			u.Hosts = append(u.Hosts, h)
		}
	}
	return u, nil
}

// DatabaseUserPolicy is what setting up the database user may do to an account that exists.
type DatabaseUserPolicy struct {
	// Adopted: the resource already held this user on this node (an import of accounting set
	// up by hand): an account the provider did not create is used as it is.
	Adopted bool
	// Rotate: the administrator asked for a new password (database_password_wo_version
	// changed), which an adopted account then takes.
	Rotate bool
}

// databaseUserSteps is what apply does to the database user.
type databaseUserSteps struct {
	// record: add the name to DatabaseUsersPath before the account is created.
	record bool
	// create: CREATE USER IF NOT EXISTS, password and grant, as for an account of its own.
	create bool
	// alter: set the password of an adopted account.
	alter bool
}

// planDatabaseUser decides what apply may do to u under policy.
func planDatabaseUser(u DatabaseUser, policy DatabaseUserPolicy) (databaseUserSteps, error) {
	switch {
	case !u.Exists():
		return databaseUserSteps{record: !u.Created, create: true}, nil
	case u.Created:
		return databaseUserSteps{create: true}, nil
	case !policy.Adopted:
		return databaseUserSteps{}, &ForeignDatabaseUserError{User: u}
	case policy.Rotate:
		return databaseUserSteps{alter: true}, nil
	case !u.LoginWorks:
		return databaseUserSteps{}, fmt.Errorf("%w %s, which the provider did not create (it is not in %s), so it does not set its password",
			ErrDatabasePasswordRefused, u.Accounts(), DatabaseUsersPath)
	}
	return databaseUserSteps{}, nil
}

// databaseSQL is the SQL of steps for d: the database always, the account only as steps say.
func databaseSQL(d Slurmdbd, password []byte, steps databaseUserSteps) []byte {
	var b strings.Builder
	user := "'" + d.DatabaseUser + "'@'localhost'"
	fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS `%s`;\n", d.Database)
	if steps.create {
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY '%s';\n", user, password)
	}
	if steps.create || steps.alter {
		fmt.Fprintf(&b, "ALTER USER %s IDENTIFIED BY '%s';\n", user, password)
	}
	if steps.create {
		fmt.Fprintf(&b, "GRANT ALL ON `%s`.* TO %s;\n", d.Database, user)
	}
	return []byte(b.String())
}

// recordDatabaseUserText adds "$name" to DatabaseUsersPath unless it is there; it runs before
// the account is created, so an apply cut in between still finds the account its own.
var recordDatabaseUserText = transport.StateDirText + recordDatabaseUser

//go:embed database_user_record.sh
var recordDatabaseUser string

// sqlScript runs the SQL on stdin through mysql as root over the unix socket, after recording
// the user when record is set. An error is reduced to MariaDB's code, since its message may
// quote the statement.
func sqlScript(name string, record bool) string {
	s := transport.NewScript()
	if record {
		s.Set("name", name).Set("list", DatabaseUsersPath).Set("header", databaseUsersHeader).Text(recordDatabaseUserText)
	}
	return s.Text(sqlText).String()
}

//go:embed sql.sh
var sqlText string

// errNoAnswer is a MariaDB that does not run, so its accounts cannot be read yet.
var errNoAnswer = errors.New("MariaDB did not answer")

// readDatabaseUserSteps reads the database user and decides what apply may do to it; while
// MariaDB does not run it returns errNoAnswer, so the caller can start it and ask again.
func readDatabaseUserSteps(ctx context.Context, ex transport.Executor, d Slurmdbd, password []byte, policy DatabaseUserPolicy) (databaseUserSteps, error) {
	u, err := ReadDatabaseUser(ctx, ex, d.DatabaseUser, password)
	if err != nil {
		return databaseUserSteps{}, err
	}
	if !u.Answered {
		return databaseUserSteps{}, fmt.Errorf("read MariaDB's accounts named %s: %w: %s", d.DatabaseUser, errNoAnswer, u.Problem)
	}
	return planDatabaseUser(u, policy)
}

// ensureDatabase creates the database and sets up its user as steps say, on a running MariaDB.
func ensureDatabase(ctx context.Context, ex transport.Executor, d Slurmdbd, password []byte, steps databaseUserSteps) error {
	sql := databaseSQL(d, password, steps)
	defer wipe(sql)
	if _, err := ex.Sudo(ctx, sqlScript(d.DatabaseUser, steps.record), sql); err != nil {
		return fmt.Errorf("create database %s and its user %s in MariaDB: %w", d.Database, d.DatabaseUser, err)
	}
	if steps.record {
		transport.Changed(ctx, ex, "created MariaDB user "+d.DatabaseUser+", recorded in "+DatabaseUsersPath)
	}
	return nil
}
