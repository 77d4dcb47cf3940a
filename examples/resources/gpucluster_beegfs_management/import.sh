# The node that runs beegfs-mgmtd; db_file is read from /etc/beegfs/beegfs-mgmtd.toml.
terraform import gpucluster_beegfs_management.cluster login01

# With the nodes that hold copies of conn.auth and cert.pem.
terraform import gpucluster_beegfs_management.cluster login01@gpu01,gpu02,gpu03
