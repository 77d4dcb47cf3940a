import {
  to = gpucluster_beegfs_metadata.cluster
  id = "login01:/beegfs/meta"
}
