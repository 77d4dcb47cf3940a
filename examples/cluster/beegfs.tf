# The guide's BeeGFS: management and metadata on login01 (on the RAID1 filesystem at /beegfs),
# one storage target on each storage GPU server (on the RAID10 filesystem at /data), and the
# client on every node with BeeGFS mounted over /home. The RAID volumes and their /etc/fstab
# lines (by UUID) are prepared by hand, as the guide says; the resources refuse a directory that
# is not on such a separate filesystem.

locals {
  # The guide numbers storage node N's target N01: gpu02 is node 2 with target 201.
  beegfs_storage_nodes = {
    for s in local.firewall_groups.beegfs_storage : s => tonumber(regex("[0-9]+$", s))
  }
}

# db-file on /beegfs, `beegfs-mgmtd --init` once, conn.auth and cert.pem generated on login01
# and copied to every other BeeGFS node. The state holds their fingerprints only.
resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = "/beegfs/mgmtd/mgmtd.sqlite"
  auth_nodes = var.gpu_servers
}

# beegfs-setup-meta -p /beegfs/meta -s 1 -m <login01>, with the interlock: storeFsUUID is the
# UUID of /beegfs, and beegfs-meta waits for /beegfs to be mounted.
resource "gpucluster_beegfs_metadata" "cluster" {
  node        = "login01"
  path        = "/beegfs/meta"
  node_num_id = 1
  mgmtd_host  = var.login_address

  depends_on = [gpucluster_beegfs_management.cluster]
}

# beegfs-setup-storage -p /data/beegfs-storage -s N -i N01 -m <login01>, once per target, with
# storeAllowFirstRunInit = false and storeFsUUID aligned with storeStorageDirectory (pitfall
# P12). A /data that did not mount shows in the plan; it never becomes a new empty target.
resource "gpucluster_beegfs_target" "gpu" {
  for_each = local.beegfs_storage_nodes

  node        = each.key
  path        = "/data/beegfs-storage"
  node_num_id = each.value
  mgmtd_host  = var.login_address

  depends_on = [gpucluster_beegfs_management.cluster, gpucluster_beegfs_metadata.cluster]
}

# login01 mounts first. Its local /home holds admin's home, which BeeGFS would hide (pitfall P9):
# migrate_local_home copies it (rsync -aHAX --numeric-ids) onto BeeGFS before the mount.
resource "gpucluster_beegfs_client" "login01" {
  node               = "login01"
  mgmtd_host         = var.login_address
  migrate_local_home = true
  expected_fstype    = var.home_fstype

  depends_on = [gpucluster_beegfs_metadata.cluster, gpucluster_beegfs_target.gpu]
}

# The GPU servers mount the /home that login01 filled: admin's home, keys included, is already
# there, which the client checks before it mounts over the local /home.
resource "gpucluster_beegfs_client" "gpu" {
  for_each = toset(var.gpu_servers)

  node            = each.key
  mgmtd_host      = var.login_address
  expected_fstype = var.home_fstype

  depends_on = [gpucluster_beegfs_client.login01]
}
