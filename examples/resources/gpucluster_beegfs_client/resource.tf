# The management service that puts conn.auth and cert.pem on every BeeGFS node
# (see gpucluster_beegfs_management).
resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = "/beegfs/mgmtd/mgmtd.sqlite"
  auth_nodes = ["gpu01"]
}

# BeeGFS over /home on login01, as the guide mounts it on every node. The first
# mount copies the local /home into BeeGFS (pitfall P9: otherwise it would hide
# admin's ~/.ssh/authorized_keys); BeeGFS files are never overwritten.
resource "gpucluster_beegfs_client" "login01" {
  node               = "login01"
  mgmtd_host         = "10.0.0.10"
  migrate_local_home = true

  # conn.auth must be on the node before the client mounts.
  depends_on = [gpucluster_beegfs_management.cluster]
}

# The other nodes mount once admin's home is on BeeGFS: without
# migrate_local_home the apply refuses, changing nothing, while it is missing.
resource "gpucluster_beegfs_client" "gpu01" {
  node       = "gpu01"
  mgmtd_host = "10.0.0.10"

  depends_on = [gpucluster_beegfs_client.login01]
}
