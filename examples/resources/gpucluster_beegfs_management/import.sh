# NODE@NODE1,NODE2,...: the node that runs beegfs-mgmtd and the nodes that hold copies of
# conn.auth and cert.pem (auth_nodes); db_file is read from /etc/beegfs/beegfs-mgmtd.toml and the
# database must exist. Bare NODE imports an empty auth_nodes. Destroy stops and disables
# beegfs-mgmtd and removes the provider's drop-in; the database, conn.auth, cert.pem, key.pem and
# the copies on the auth nodes stay.
terraform import gpucluster_beegfs_management.cluster login01@gpu01,gpu02,gpu03
