import {
  to = gpucluster_slurm_node.gpu01
  id = "gpu01@login01"
}
