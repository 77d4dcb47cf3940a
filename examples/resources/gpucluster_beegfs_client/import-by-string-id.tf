import {
  to = gpucluster_beegfs_client.gpu01
  id = "gpu01"
}
