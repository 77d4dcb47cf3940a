# NAME@CONTROLLER: the QOS name and the controller.
terraform import gpucluster_slurm_qos.gpu1 gpu1@login01
