# NAME@CONTROLLER: the account name and the controller.
terraform import gpucluster_slurm_account.research research@login01
