package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

//go:embed backup.sh
var backupScript string

//go:embed backup_list.sh
var backupListScript string

// The files of one backup, in its directory.
const (
	// StateArchive is StateSaveLocation's content, a tar archive made from inside it.
	StateArchive = "statesave.tar.gz"
	// DumpSuffix follows the database's name in the file of its dump (mysqldump --databases, gzipped).
	DumpSuffix = ".sql.gz"
)

// backupPrefix starts the name of every backup; the rest is its UTC time.
const backupPrefix = "slurm-backup-"

const backupTimeLayout = "20060102T150405Z"

var (
	// BackupPathPattern is an absolute path of plain names, so that no part of it can be
	// read as an option or a pattern, whatever reads it.
	BackupPathPattern = regexp.MustCompile(`^(/[A-Za-z0-9._+-]+)+$`)
	backupName        = regexp.MustCompile(`^` + backupPrefix + `[0-9]{8}T[0-9]{6}Z$`)
)

// Backup is one backup of the controller: StateSaveLocation, and the accounting database when
// Database is set, into a directory of its own under Destination. The newest Retention
// backups there are kept.
type Backup struct {
	StateSaveLocation string
	Destination       string
	Retention         int
	// Database is the accounting database on the controller's MariaDB; empty for none.
	Database string
}

// CheckDestination refuses a destination that is not an absolute, clean directory path, or
// that is a system directory, whose own content the backups would mix with.
func CheckDestination(dir string) error {
	switch {
	case !BackupPathPattern.MatchString(dir) || path.Clean(dir) != dir:
		return fmt.Errorf("destination %q: want an absolute path of letters, digits and . _ + -, without . or .. parts or a trailing / (such as /var/backups/slurm)", dir)
	}
	for _, system := range []string{"/etc", "/bin", "/sbin", "/usr", "/lib", "/boot", "/dev", "/proc", "/sys", "/run", "/var", "/home", "/root", "/tmp"} {
		if dir == system {
			return fmt.Errorf("destination %q: a system directory; name a directory of its own (such as %s/slurm-backups)", dir, dir)
		}
	}
	return nil
}

// Validate checks every value that reaches the backup's script.
func (b Backup) Validate() error {
	if err := CheckDestination(b.Destination); err != nil {
		return err
	}
	if !strings.HasPrefix(b.StateSaveLocation, "/") || checkValue("StateSaveLocation", b.StateSaveLocation) != nil {
		return fmt.Errorf("StateSaveLocation %q: want an absolute path", b.StateSaveLocation)
	}
	if dest, state := b.Destination+"/", strings.TrimRight(b.StateSaveLocation, "/")+"/"; strings.HasPrefix(dest, state) || strings.HasPrefix(state, dest) {
		return fmt.Errorf("destination %q: must be outside StateSaveLocation %s, and not hold it", b.Destination, b.StateSaveLocation)
	}
	if b.Retention < 1 {
		return fmt.Errorf("retention %d: keep at least one backup", b.Retention)
	}
	if b.Database != "" && !SQLNamePattern.MatchString(b.Database) {
		return fmt.Errorf("database %q is not a database name", b.Database)
	}
	return nil
}

// BackupName is the name of a backup taken at t.
func BackupName(t time.Time) string {
	return backupPrefix + t.UTC().Format(backupTimeLayout)
}

// TakeBackup takes one backup at now and removes those beyond the retention. slurmctld, when
// it runs, is stopped for the copy, as Slurm's upgrade guide asks, and waited for up to wait
// after it is started again: jobs keep running meanwhile, but Slurm's commands get no answer.
// It returns the backups in the destination, oldest first, the new one last.
func TakeBackup(ctx context.Context, h ControllerHost, b Backup, now time.Time, wait time.Duration) ([]string, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	unlock, err := h.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("slurm backup: %w", err)
	}
	defer unlock()
	// Once slurmctld is stopped, a cancelled apply must not leave it so: the script runs to its
	// end, bounded by a timeout of its own.
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Minute)
	defer cancel()
	name := BackupName(now)
	script := transport.NewScript().Set("state", b.StateSaveLocation).Set("dest", b.Destination).Set("name", name).Set("db", b.Database).Text(accountingDump).Text(backupScript).String()
	if _, err := h.Sudo(settle, script, nil); err != nil {
		return nil, fmt.Errorf("back up %s into %s/%s: %w", b.StateSaveLocation, b.Destination, name, err)
	}
	transport.Changed(ctx, h, "took the backup "+b.Destination+"/"+name)
	if err := waitControllerIfActive(settle, h, wait); err != nil {
		return nil, err
	}
	return PruneBackups(ctx, h, b.Destination, b.Retention)
}

// waitControllerIfActive waits for slurmctld to answer when systemd runs it: the backup started
// it again only if it ran before.
func waitControllerIfActive(ctx context.Context, ex transport.Executor, wait time.Duration) error {
	if _, err := ex.Sudo(ctx, transport.ScriptEnv+"systemctl is-active --quiet slurmctld", nil); err != nil {
		var exit *transport.ExitError
		if errors.As(err, &exit) {
			return nil
		}
		return fmt.Errorf("ask systemd whether slurmctld runs: %w", err)
	}
	return waitController(ctx, ex, wait)
}

// PruneBackups removes the backups in dir beyond the newest retention, and returns those left,
// oldest first.
func PruneBackups(ctx context.Context, ex transport.Executor, dir string, retention int) ([]string, error) {
	if retention < 1 {
		return nil, fmt.Errorf("retention %d: keep at least one backup", retention)
	}
	backups, removed, err := listBackups(ctx, ex, dir, fmt.Sprint(retention), false)
	for _, r := range removed {
		transport.Changed(ctx, ex, "removed the backup "+dir+"/"+r+", beyond the retention")
	}
	return backups, err
}

// ListBackups returns the backups in dir, oldest first, as paths; none when dir is missing.
func ListBackups(ctx context.Context, ex transport.Executor, dir string) ([]string, error) {
	backups, _, err := listBackups(ctx, ex, dir, "", true)
	return backups, err
}

func listBackups(ctx context.Context, ex transport.Executor, dir, keep string, readOnly bool) (backups, removed []string, err error) {
	if err := CheckDestination(dir); err != nil {
		return nil, nil, err
	}
	script := transport.NewScript().Set("dest", dir).Set("keep", keep).Text(backupListScript).String()
	var res transport.Result
	if readOnly {
		res, err = ex.Read(ctx, script)
	} else {
		res, err = ex.Sudo(ctx, script, nil)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list the backups in %s: %w", dir, err)
	}
	return parseBackupList(dir, string(res.Stdout))
}

// parseBackupList reads backup_list.sh's lines.
func parseBackupList(dir, out string) (backups, removed []string, err error) {
	backups = []string{}
	for line := range strings.Lines(out) {
		kind, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !backupName.MatchString(name) {
			return nil, nil, fmt.Errorf("list the backups in %s: unexpected line %q", dir, strings.TrimSpace(line))
		}
		switch kind {
		case "backup":
			backups = append(backups, dir+"/"+name)
		case "removed":
			removed = append(removed, name)
		default:
			return nil, nil, fmt.Errorf("list the backups in %s: unexpected line %q", dir, strings.TrimSpace(line))
		}
	}
	return backups, removed, nil
}
