# The management service that puts conn.auth on gpu02 (see gpucluster_beegfs_management).
resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = "/beegfs/mgmtd/mgmtd.sqlite"
  auth_nodes = ["gpu02"]
}

# The guide's storage target on gpu02: node 2, target 201 (<node>01), on the RAID10 filesystem
# mounted at /data by UUID. beegfs-setup-storage runs once; the interlock
# (storeAllowFirstRunInit = false, storeFsUUID = ,<UUID of /data>) and RequiresMountsFor=/data
# keep a /data that did not mount from ever becoming a new, empty target.
resource "gpucluster_beegfs_target" "gpu02" {
  node        = "gpu02"
  path        = "/data/beegfs-storage"
  node_num_id = 2
  mgmtd_host  = "10.0.0.10"

  # conn.auth must be on the node before beegfs-storage starts.
  depends_on = [gpucluster_beegfs_management.cluster]
}

# force_destroy_data = true makes destroy delete the target directory and all its data. This
# cannot be undone; leave it unset (false) and destroy only stops and disables the service.
