# NAME@CONTROLLER: the user name and the controller.
terraform import gpucluster_slurm_user.alice alice@login01
