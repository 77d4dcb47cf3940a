# CONTROLLER when slurmdbd runs on the controller, NODE@CONTROLLER otherwise.
# The password is not read back: keep database_password_wo in the configuration.
terraform import gpucluster_slurm_accounting.cluster login01
