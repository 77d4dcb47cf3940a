# NAME@CONTROLLER: the node name and the controller node that holds its fragment.
terraform import gpucluster_slurm_node.gpu01 gpu01@login01
