package slurm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// SlurmdbdConfPath is slurmdbd's configuration. It holds the database password, so only
// SlurmUser may read it: slurmdbd refuses to start when others can.
const SlurmdbdConfPath = ConfDir + "/slurmdbd.conf"

// MariaDBConfPath is the provider's MariaDB settings for slurmdbd.
const MariaDBConfPath = "/etc/mysql/mariadb.conf.d/90-gpucluster-slurmdbd.cnf"

// mariaDBConf holds what slurmdbd needs of MariaDB. MariaDB 11.6.2 and later (Debian 13 ships
// 11.8) turn innodb_snapshot_isolation on by default, and slurmdbd's updates of the
// association table then fail with error 1020 ("Record has changed since last read"): a QOS
// cannot be deleted, for one. The loose- prefix lets a MariaDB without the setting start.
// Slurm's accounting guide asks for a lock wait of 900 s, as its rollups hold long locks.
const mariaDBConf = "# Managed by terraform-provider-gpucluster (gpucluster_slurm_accounting): do not edit, changes are overwritten.\n" +
	"[mysqld]\n" +
	"loose-innodb_snapshot_isolation = OFF\n" +
	"innodb_lock_wait_timeout = 900\n"

// DatabasePackages are what the accounting node needs: the database, slurmdbd, and
// slurm-client for the sacctmgr that tells when slurmdbd answers.
var DatabasePackages = []string{DatabaseServerPackage, "slurmdbd", "slurm-client"}

// DatabaseServerPackage is MariaDB's server, which holds slurmdbd's database.
const DatabaseServerPackage = "mariadb-server"

// DefaultDbdPort is slurmdbd's port, DbdPort and AccountingStoragePort.
const DefaultDbdPort = 6819

// Slurmdbd are slurmdbd.conf's settings apart from the password.
type Slurmdbd struct {
	// DbdHost is the node slurmdbd runs on, as slurmctld reaches it.
	DbdHost string
	DbdPort int
	// SlurmUser runs slurmdbd and owns slurmdbd.conf.
	SlurmUser string
	// Database and DatabaseUser are StorageLoc and StorageUser, on the local MariaDB.
	Database     string
	DatabaseUser string
}

var (
	// SQLNamePattern is a database or user name that needs no quoting in SQL or a shell.
	SQLNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,31}$`)
	// passwordPattern is a password that fits slurmdbd.conf's key=value lines and an SQL
	// string literal without escapes, so a syntax error can never echo it back.
	passwordPattern = regexp.MustCompile(`^[A-Za-z0-9._~+=/@%^,:!-]{12,128}$`)
)

// PasswordRule says what ValidatePassword accepts, for documentation and errors.
const PasswordRule = "12 to 128 characters of letters, digits and . _ ~ + = / @ % ^ , : ! -" //nolint:gosec // G101: a rule for passwords, not one.

// ValidatePassword refuses a database password slurmdbd.conf or SQL could not hold as it is.
// The error never quotes the password.
func ValidatePassword(pw []byte) error {
	if !passwordPattern.Match(pw) {
		return fmt.Errorf("the database password must be %s (it has %d characters)", PasswordRule, len(pw))
	}
	return nil
}

// Validate checks every value that reaches slurmdbd.conf, SQL or a shell.
func (d Slurmdbd) Validate() error {
	switch {
	case !NamePattern.MatchString(d.DbdHost):
		return &FieldError{Field: "DbdHost", Err: fmt.Errorf("slurmdbd: host %q: use letters, digits, '.', '_' and '-'", d.DbdHost)}
	case d.DbdPort < 1 || d.DbdPort > 65535:
		return &FieldError{Field: "DbdPort", Err: fmt.Errorf("slurmdbd: port %d is not a TCP port", d.DbdPort)}
	case !SQLNamePattern.MatchString(d.SlurmUser):
		return &FieldError{Field: "SlurmUser", Err: fmt.Errorf("slurmdbd: user %q: use letters, digits and '_'", d.SlurmUser)}
	case !SQLNamePattern.MatchString(d.Database):
		return &FieldError{Field: "StorageLoc", Err: fmt.Errorf("slurmdbd: database %q: use letters, digits and '_', at most 32", d.Database)}
	case !SQLNamePattern.MatchString(d.DatabaseUser):
		return &FieldError{Field: "StorageUser", Err: fmt.Errorf("slurmdbd: database user %q: use letters, digits and '_', at most 32", d.DatabaseUser)}
	}
	return nil
}

// RenderSlurmdbdConf writes slurmdbd.conf for a MariaDB on the same node, reached over its
// unix socket (StorageHost=localhost).
func RenderSlurmdbdConf(d Slurmdbd, password []byte) []byte {
	var b bytes.Buffer
	b.WriteString("# Managed by terraform-provider-gpucluster (gpucluster_slurm_accounting): do not edit, changes are overwritten.\n")
	for _, s := range d.settings() {
		fmt.Fprintf(&b, "%s=%s\n", s.key, s.value)
	}
	b.WriteString("StoragePass=")
	b.Write(password)
	b.WriteString("\n")
	return b.Bytes()
}

func (d Slurmdbd) settings() []setting {
	return []setting{
		{"AuthType", "auth/munge"}, {"DbdHost", d.DbdHost}, {"DbdPort", strconv.Itoa(d.DbdPort)},
		{"SlurmUser", d.SlurmUser}, {"PidFile", "/run/slurmdbd/slurmdbd.pid"},
		{"StorageType", "accounting_storage/mysql"}, {"StorageHost", "localhost"},
		{"StorageLoc", d.Database}, {"StorageUser", d.DatabaseUser},
	}
}

// ParseSlurmdbdConf reads slurmdbd.conf's key=value lines by their lower-case key, the way
// slurmdbd compares them.
func ParseSlurmdbdConf(content []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return out
}

// SlurmdbdState is the accounting node as one round trip finds it. It holds no secret:
// whether slurmdbd.conf is as the provider wrote it is decided on the host.
type SlurmdbdState struct {
	// Installed: slurmdbd and mariadb-server are both installed.
	Installed bool
	// ConfExists, and ConfMatches: the file's settings apart from the password, with its owner
	// and mode, are what Slurmdbd renders.
	ConfExists, ConfMatches bool
	// LoginWorks: the password in slurmdbd.conf opens the database as its user, checked on the
	// host.
	LoginWorks bool
	// DatabaseConfMatches: MariaDB's settings for slurmdbd are in place.
	DatabaseConfMatches bool
	// DatabaseActive, DbdActive: mariadb and slurmdbd run.
	DatabaseActive, DbdActive bool
}

// slurmdbdStateScript compares slurmdbd.conf with d on the host: the file less its password
// line must have the digest of what RenderSlurmdbdConf writes less the password, so the
// password never leaves the host.
func slurmdbdStateScript(d Slurmdbd) string {
	sum := sha256.Sum256(confWithoutPassword(d))
	dbSum := sha256.Sum256([]byte(mariaDBConf))
	return transport.NewScript().Text(transport.SectionFuncs).
		Set("conf", SlurmdbdConfPath).Set("owner", d.SlurmUser+":"+d.SlurmUser+" 600").Set("conf_sum", hex.EncodeToString(sum[:])).
		Set("db_conf", MariaDBConfPath).Set("db_sum", hex.EncodeToString(dbSum[:])).
		Set("db_user", d.DatabaseUser).Set("db", d.Database).
		Text(slurmdbdState).String()
}

//go:embed slurmdbd_state.sh
var slurmdbdState string

// ReadSlurmdbd reads the accounting node's SlurmdbdState for the configuration d.
func ReadSlurmdbd(ctx context.Context, ex transport.Executor, d Slurmdbd) (SlurmdbdState, error) {
	if err := d.Validate(); err != nil {
		return SlurmdbdState{}, err
	}
	sections, err := transport.ReadSections(ctx, ex, slurmdbdStateScript(d), "read slurmdbd's state")
	if err != nil {
		return SlurmdbdState{}, err
	}
	conf := strings.Join(sections["conf"].Lines, "")
	return SlurmdbdState{
		Installed:           bothInstalled(sections["installed"].Lines),
		ConfExists:          conf != "missing",
		ConfMatches:         conf == "matches",
		DatabaseActive:      sections["mariadb"].Status == 0,
		DatabaseConfMatches: sections["mariadbconf"].Status == 0,
		LoginWorks:          sections["login"].Status == 0,
		DbdActive:           sections["slurmdbd"].Status == 0,
	}, nil
}

// bothInstalled reads dpkg-query's status abbreviations of slurmdbd and mariadb-server.
func bothInstalled(abbrevs []string) bool {
	n := 0
	for _, a := range abbrevs {
		if strings.HasPrefix(a, "ii") {
			n++
		}
	}
	return n == 2
}

// confWithoutPassword is slurmdbd.conf as RenderSlurmdbdConf writes it, minus the password.
func confWithoutPassword(d Slurmdbd) []byte {
	full := RenderSlurmdbdConf(d, nil)
	return bytes.Replace(full, []byte("StoragePass=\n"), nil, 1)
}

// Drift lists what differs from a running, configured accounting node, for a plan.
func (s SlurmdbdState) Drift() []string {
	var out []string
	if !s.Installed {
		out = append(out, "slurmdbd or mariadb-server is not installed")
	}
	switch {
	case !s.ConfExists:
		out = append(out, SlurmdbdConfPath+" is missing")
	case !s.ConfMatches:
		out = append(out, SlurmdbdConfPath+" was changed (content, owner or mode)")
	}
	if s.ConfExists && s.DatabaseActive && !s.LoginWorks {
		out = append(out, "the password in "+SlurmdbdConfPath+" does not open the database")
	}
	if !s.DatabaseConfMatches {
		out = append(out, MariaDBConfPath+" is missing or was changed")
	}
	if !s.DatabaseActive {
		out = append(out, "mariadb does not run")
	}
	if !s.DbdActive {
		out = append(out, "slurmdbd does not run")
	}
	return out
}

// startDatabaseScript starts MariaDB, restarted when its settings changed.
func startDatabaseScript(restart bool) string {
	return transport.NewScript().Text(units.EnableText("mariadb")+" || exit").Set("restart", flag(restart)).Text(startMariaDB).String()
}

//go:embed start_mariadb.sh
var startMariaDB string

// flag is a boolean as the scripts test it.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

//go:embed start_slurmdbd.sh
var startSlurmdbd string

//go:embed stop_slurmdbd.sh
var stopSlurmdbd string

// SlurmdbdHost is what setting up slurmdbd needs of its node.
type SlurmdbdHost interface {
	transport.Executor
	transport.FileWriter
}

// EnsureSlurmdbd brings the accounting node to d with password: MariaDB runs and holds the
// database and its user with that password, slurmdbd.conf is d's (written only when it
// differs), and slurmdbd runs with it, restarted when the file changed. It returns once
// sacctmgr gets an answer from slurmdbd, at most wait later. Packages must be installed.
//
// A MariaDB account of d's user that the provider did not create is refused, a
// *ForeignDatabaseUserError, unless policy says it was adopted; an adopted one keeps its
// password unless policy rotates it. When MariaDB runs, that is decided before anything changes.
func EnsureSlurmdbd(ctx context.Context, h SlurmdbdHost, d Slurmdbd, password []byte, policy DatabaseUserPolicy, wait time.Duration) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if err := ValidatePassword(password); err != nil {
		return err
	}
	if err := CheckDatabaseUserName(d.DatabaseUser); err != nil {
		return err
	}
	steps, err := readDatabaseUserSteps(ctx, h, d, password, policy)
	started := !errors.Is(err, errNoAnswer)
	if err != nil && started {
		return err
	}
	dbChanged, err := h.WriteFile(ctx, transport.File{Path: MariaDBConfPath, Content: []byte(mariaDBConf), Owner: "root", Group: "root", Mode: 0o644})
	if err != nil {
		return fmt.Errorf("write %s: %w", MariaDBConfPath, err)
	}
	if _, err := h.Sudo(ctx, startDatabaseScript(dbChanged), nil); err != nil {
		return fmt.Errorf("start mariadb: %w", err)
	}
	if dbChanged {
		transport.Changed(ctx, h, "restarted mariadb with "+MariaDBConfPath)
	}
	if !started {
		if steps, err = readDatabaseUserSteps(ctx, h, d, password, policy); err != nil {
			return err
		}
	}
	if err := ensureDatabase(ctx, h, d, password, steps); err != nil {
		return err
	}
	conf := RenderSlurmdbdConf(d, password)
	defer wipe(conf)
	changed, err := h.WriteFile(ctx, transport.File{Path: SlurmdbdConfPath, Content: conf, Owner: d.SlurmUser, Group: d.SlurmUser, Mode: 0o600})
	if err != nil {
		return fmt.Errorf("write %s: %w", SlurmdbdConfPath, err)
	}
	verb := "start"
	if changed {
		verb = "restart"
	}
	script := transport.NewScript().Text(units.EnableText("slurmdbd")+" || exit").Set("changed", flag(changed)).Text(startSlurmdbd).String()
	res, err := h.Sudo(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("%s slurmdbd: %w", verb, err)
	}
	if strings.TrimSpace(string(res.Stdout)) == "done" {
		transport.Changed(ctx, h, verb+"ed slurmdbd")
	}
	return WaitSlurmdbd(ctx, h, AccountingClient{Cluster: "", Host: d.DbdHost, Port: d.DbdPort}, wait)
}

// wipe clears a buffer that held a secret, so it does not linger in memory.
func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// WaitSlurmdbd polls until sacctmgr gets an answer from slurmdbd, for at most timeout.
func WaitSlurmdbd(ctx context.Context, ex transport.Executor, c AccountingClient, timeout time.Duration) error {
	return poll(ctx, timeout, "wait for slurmdbd", func(ctx context.Context) error {
		_, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "cluster", "format=cluster")
		return err
	})
}

// StopSlurmdbd stops and disables slurmdbd and removes slurmdbd.conf, the file with the
// password. The database, and with it every job's history, stays in MariaDB.
//
// A failed result of that stop is cleared: Slurm 26.05's slurmdbd, stopped seconds after it
// started, can die of its own SIGUSR1 while it shuts down ("Terminate signal SIGTERM
// received", then "code=killed, status=10/USR1"). It is stopped as asked, and a unit left
// failed would show in `systemctl --failed`, and in the monitoring built on it, for a stop
// the administrator asked for.
func StopSlurmdbd(ctx context.Context, ex transport.Executor) error {
	script := transport.NewScript().Set("conf", SlurmdbdConfPath).Text(stopSlurmdbd).String()
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("stop slurmdbd: %w", err)
	}
	return nil
}

//go:embed slurmdbd_settings.sh
var slurmdbdSettings string

// ReadSlurmdbdSettings reads slurmdbd.conf's settings, by lower-case key, with the password
// line left out on the host. found is false when there is no slurmdbd.conf.
func ReadSlurmdbdSettings(ctx context.Context, ex transport.Executor) (settings map[string]string, found bool, err error) {
	script := transport.NewScript().Set("conf", SlurmdbdConfPath).Text(slurmdbdSettings).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", SlurmdbdConfPath, err)
	}
	out, found := strings.CutPrefix(string(res.Stdout), "found\n")
	if !found {
		return nil, false, nil
	}
	return ParseSlurmdbdConf([]byte(out)), true, nil
}

// Hostname is the node's short host name: slurmdbd starts only on the host DbdHost names.
func Hostname(ctx context.Context, ex transport.Executor) (string, error) {
	res, err := ex.Sudo(ctx, transport.ScriptEnv+"hostname -s", nil)
	if err != nil {
		return "", fmt.Errorf("hostname -s: %w", err)
	}
	name := strings.TrimSpace(string(res.Stdout))
	if !NamePattern.MatchString(name) {
		return "", fmt.Errorf("hostname -s: %q is not a host name", name)
	}
	return name, nil
}
