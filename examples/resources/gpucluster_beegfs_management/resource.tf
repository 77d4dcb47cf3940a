# The guide's management service on login01: the database on the RAID1 at /beegfs,
# conn.auth and cert.pem copied to every BeeGFS node.
resource "gpucluster_beegfs_management" "cluster" {
  node       = "login01"
  db_file    = "/beegfs/mgmtd/mgmtd.sqlite"
  auth_nodes = ["gpu01", "gpu02", "gpu03"]
}
