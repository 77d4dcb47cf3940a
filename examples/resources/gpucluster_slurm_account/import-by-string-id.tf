import {
  to = gpucluster_slurm_account.research
  id = "research@login01"
}
