import {
  to = gpucluster_slurm_accounting.cluster
  id = "login01"
}
