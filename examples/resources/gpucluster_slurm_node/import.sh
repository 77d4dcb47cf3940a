# NAME@CONTROLLER: the node as the controller defines it. A bare NAME, the resource's id, is
# found on the provider's login_node. One import per node, also when a hand-written slurm.conf
# defines several in one line (NodeName=gpu[01-03]).
# Destroy drains the node, removes its definition and restarts Slurm in order.
terraform import gpucluster_slurm_node.gpu01 gpu01@login01
terraform import gpucluster_slurm_node.gpu02 gpu02
