import {
  to = gpucluster_beegfs_target.gpu02
  id = "gpu02:/data/beegfs-storage"
}
