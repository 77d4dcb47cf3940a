# NAME@CONTROLLER: the partition name and the controller node that holds its fragment.
terraform import gpucluster_slurm_partition.gpu gpu@login01
