# A backup of slurmctld's state and the accounting database before each Slurm
# upgrade: change trigger (here the version being left) and apply. The apply
# stops slurmctld for the seconds of the copy; running jobs go on. The newest
# seven backups stay in /var/backups/slurm on the controller; copy them off it.
resource "gpucluster_slurm_backup" "slurm" {
  controller         = "login01"
  destination        = "/var/backups/slurm"
  retention          = 7
  trigger            = "before-slurm-25.05.3"
  include_accounting = true
}
