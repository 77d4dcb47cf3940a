package slurm

import (
	"context"
	_ "embed"
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
