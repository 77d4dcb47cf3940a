# The guide's metadata service on login01, node 1, with the interlock on /beegfs.
resource "gpucluster_beegfs_metadata" "meta" {
  node        = "login01"
  path        = "/beegfs/meta"
  node_num_id = 1
  mgmtd_host  = "10.0.0.10"

  # beegfs-meta refuses to start without conn.auth, which the management resource puts there.
  depends_on = [gpucluster_beegfs_management.mgmtd]
}
