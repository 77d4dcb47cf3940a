import {
  to = gpucluster_slurm_qos.gpu1
  id = "gpu1@login01"
}
