# NAME@CONTROLLER: the partition as the controller defines it, in its fragment or a hand-written
# PartitionName line. A bare NAME, the resource's id, is found on the provider's login_node.
# Destroy removes the partition's line with a reconfigure.
terraform import gpucluster_slurm_partition.gpu gpu@login01
