import {
  to = gpucluster_beegfs_management.cluster
  id = "login01@gpu01,gpu02,gpu03"
}
