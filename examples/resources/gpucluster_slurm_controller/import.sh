# The controller node, as in the resource's node attribute. The settings are read
# from the controller's fragment in /etc/slurm/gpucluster.d, so only a controller
# set up by this provider can be imported.
terraform import gpucluster_slurm_controller.cluster login01
