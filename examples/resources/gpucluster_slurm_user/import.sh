# NAME@CONTROLLER: the user as slurmdbd on the controller knows it. A bare NAME, the
# resource's id, is found on the provider's login_node.
terraform import gpucluster_slurm_user.alice alice@login01
