# DESTINATION@CONTROLLER: the backups' directory on the controller and the
# controller. The next plan takes a backup for the configured trigger.
terraform import gpucluster_slurm_backup.slurm /var/backups/slurm@login01
