# The compute node's name; the controller and its port are read from the
# node's /etc/default/slurmd (SLURMD_OPTIONS="--conf-server login01:6817").
# Destroy drains the node, then stops and disables slurmd; the packages and
# /etc/default/slurmd stay.
terraform import gpucluster_slurm_compute.gpu01 gpu01
