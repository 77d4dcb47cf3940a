import {
  to = gpucluster_slurm_user.alice
  id = "alice@login01"
}
