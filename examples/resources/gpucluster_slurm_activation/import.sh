# The controller node, as in the resource's controller attribute. What is
# pending there is read on import; what the last activation did is not.
terraform import gpucluster_slurm_activation.cluster login01
