# NAME@CONTROLLER: the node name and the controller node. One import per node, also
# when a hand-written slurm.conf defines several in one line (NodeName=gpu[01-03]).
# Destroy drains the node, removes its definition and restarts Slurm in order.
terraform import gpucluster_slurm_node.gpu01 gpu01@login01
terraform import gpucluster_slurm_node.gpu02 gpu02@login01
