import {
  to = gpucluster_slurm_compute.gpu01
  id = "gpu01"
}
