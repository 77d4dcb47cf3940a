import {
  to = gpucluster_slurm_partition.gpu
  id = "gpu@login01"
}
