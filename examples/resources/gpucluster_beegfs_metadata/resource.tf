# The management service that puts conn.auth on the node (see gpucluster_beegfs_management).
resource "gpucluster_beegfs_management" "cluster" {
  node    = "login01"
  db_file = "/beegfs/mgmtd/mgmtd.sqlite"
}

# The guide's metadata service on login01, node 1, with the interlock on /beegfs.
resource "gpucluster_beegfs_metadata" "cluster" {
  node        = "login01"
  path        = "/beegfs/meta"
  node_num_id = 1
  mgmtd_host  = "10.0.0.10"

  # beegfs-meta refuses to start without conn.auth, which the management resource puts there.
  depends_on = [gpucluster_beegfs_management.cluster]
}
