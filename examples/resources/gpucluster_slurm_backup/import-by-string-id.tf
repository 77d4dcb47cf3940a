import {
  to = gpucluster_slurm_backup.slurm
  id = "/var/backups/slurm@login01"
}
