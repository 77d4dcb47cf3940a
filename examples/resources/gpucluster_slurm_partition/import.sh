# NAME@CONTROLLER: the partition name and the controller node, read from the
# partition's fragment or a hand-written PartitionName line.
# Destroy removes the partition's line with a reconfigure.
terraform import gpucluster_slurm_partition.gpu gpu@login01
