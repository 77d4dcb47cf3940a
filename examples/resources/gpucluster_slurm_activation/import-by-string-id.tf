import {
  to = gpucluster_slurm_activation.cluster
  id = "login01"
}
