# The compute node's name; the controller and its port are read from the
# node's /etc/default/slurmd.
terraform import gpucluster_slurm_compute.gpu01 gpu01
