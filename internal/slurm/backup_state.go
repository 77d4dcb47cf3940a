package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// BackupDir holds the copies the provider takes on a host before a change that cannot be
// undone, readable by root alone: slurmctld's state holds job scripts and environments.
const BackupDir = "/var/lib/gpucluster/backups"

// stateBackupPrefix starts the name of each copy of StateSaveLocation, followed by the UTC
// time it was taken, so copies sort by age.
const stateBackupPrefix = "slurmctld-state-"

// BackupStateSaveLocation copies slurmctld's StateSaveLocation, dir, into one new tar file
// in BackupDir and returns its path. Slurm's upgrade guide asks for this copy, taken while
// slurmctld is stopped, before slurmctld's package changes: a new slurmctld converts the
// state files, and an older one cannot read them back. The file appears only once complete.
func BackupStateSaveLocation(ctx context.Context, ex transport.Executor, dir string) (string, error) {
	if !strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") {
		return "", fmt.Errorf("StateSaveLocation %q: want an absolute path", dir)
	}
	res, err := ex.Sudo(ctx, upgradeBackupScript(dir), nil)
	if err != nil {
		return "", fmt.Errorf("back up StateSaveLocation %s into %s: %w", dir, BackupDir, err)
	}
	path := strings.TrimSpace(string(res.Stdout))
	transport.Changed(ctx, ex, "backed up "+dir+" to "+path)
	return path, nil
}

func upgradeBackupScript(dir string) string {
	return transport.NewScript().Set("d", dir).Set("b", BackupDir).Set("p", stateBackupPrefix).Text(stateBackup).String()
}

//go:embed state_backup.sh
var stateBackup string

// accountingDumpPrefix starts the name of each dump of the accounting database taken before
// an upgrade, followed by the database's name and the UTC time it was taken.
const accountingDumpPrefix = "slurmdbd-"

// defaultStorageLoc is the database slurmdbd uses when slurmdbd.conf names none.
const defaultStorageLoc = "slurm_acct_db"

// ErrAccountingDump means the dump of the accounting database taken before slurmdbd's
// package changes failed, so no package was changed.
var ErrAccountingDump = errors.New("the accounting database could not be dumped before the upgrade")

// DumpAccountingDatabase dumps the accounting database that the node's slurmdbd.conf names
// into one new gzipped file in BackupDir and returns its path, "" when the node has no
// slurmdbd.conf. Slurm's upgrade guide asks for this dump before slurmdbd's package changes:
// a new slurmdbd converts the database's tables at its first start, and an older one cannot
// read them back.
func DumpAccountingDatabase(ctx context.Context, ex transport.Executor) (string, error) {
	settings, found, err := ReadSlurmdbdSettings(ctx, ex)
	if err != nil || !found {
		return "", wrapDump(err)
	}
	db := settings["storageloc"]
	if db == "" {
		db = defaultStorageLoc
	}
	if !SQLNamePattern.MatchString(db) {
		return "", wrapDump(fmt.Errorf("StorageLoc %q in %s is not a database name", db, SlurmdbdConfPath))
	}
	res, err := ex.Sudo(ctx, accountingDumpScript(db), nil)
	if err != nil {
		return "", wrapDump(fmt.Errorf("dump the database %s into %s: %w", db, BackupDir, err))
	}
	path := strings.TrimSpace(string(res.Stdout))
	transport.Changed(ctx, ex, "dumped the accounting database "+db+" to "+path)
	return path, nil
}

func wrapDump(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrAccountingDump, err)
}

func accountingDumpScript(db string) string {
	return transport.NewScript().Set("db", db).Set("b", BackupDir).Set("p", accountingDumpPrefix).Text(accountingDump).Text(accountingDumpUpgrade).String()
}

//go:embed accounting_dump.sh
var accountingDump string

//go:embed accounting_dump_upgrade.sh
var accountingDumpUpgrade string
