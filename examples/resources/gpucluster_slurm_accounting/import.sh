# NODE@CONTROLLER: slurmdbd on NODE, as the controller's slurm.conf points at it. CONTROLLER alone,
# the resource's id, finds the node in the controller's AccountingStorageHost (the controller
# itself when it names none). The password is not read back: keep database_password_wo in the
# configuration.
terraform import gpucluster_slurm_accounting.cluster login01
