# The guide's BeeGFS on the lab: management and metadata on login01 (its lab disk at /beegfs), a
# storage target on each GPU server (its lab disk at /data), the client on every node over /home.
# The lab runs the BeeGFS stand-in (see the README): its client mounts a lab-wide shared tmpfs,
# so findmnt reports tmpfs where real BeeGFS reports beegfs.

locals {
  # The guide numbers storage node N's target N01: gpu02 is node 2 with target 201.
  beegfs_storage_nodes = {
    for s in local.firewall_groups.beegfs_storage : s => tonumber(regex("[0-9]+$", s))
  }
}

resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = "/beegfs/mgmtd/mgmtd.sqlite"
  auth_nodes = var.gpu_servers
}

resource "gpucluster_beegfs_metadata" "cluster" {
  node        = "login01"
  path        = "/beegfs/meta"
  node_num_id = 1
  mgmtd_host  = var.login_address

  depends_on = [gpucluster_beegfs_management.cluster]
}

resource "gpucluster_beegfs_target" "gpu" {
  for_each = local.beegfs_storage_nodes

  node        = each.key
  path        = "/data/beegfs-storage"
  node_num_id = each.value
  mgmtd_host  = var.login_address

  depends_on = [gpucluster_beegfs_management.cluster, gpucluster_beegfs_metadata.cluster]
}

resource "gpucluster_beegfs_client" "login01" {
  node               = "login01"
  mgmtd_host         = var.login_address
  migrate_local_home = true
  expected_fstype    = "tmpfs" # the lab's stand-in

  depends_on = [gpucluster_beegfs_metadata.cluster, gpucluster_beegfs_target.gpu]
}

resource "gpucluster_beegfs_client" "gpu" {
  for_each = toset(var.gpu_servers)

  node            = each.key
  mgmtd_host      = var.login_address
  expected_fstype = "tmpfs" # the lab's stand-in

  depends_on = [gpucluster_beegfs_client.login01]
}
