# The controller node, as in the resource's node attribute. The settings are read
# from the controller's fragment in /etc/slurm/gpucluster.d or, on a controller set
# up by hand, from /etc/slurm/slurm.conf and cgroup.conf; import changes nothing.
# Destroy stops and disables slurmctld and removes slurm.conf, cgroup.conf and gres.conf.
terraform import gpucluster_slurm_controller.cluster login01
