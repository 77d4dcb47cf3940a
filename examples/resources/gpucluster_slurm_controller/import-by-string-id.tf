import {
  to = gpucluster_slurm_controller.cluster
  id = "login01"
}
