# The node's name; the mount path and management host are read from the node's
# /etc/beegfs/beegfs-mounts.conf and beegfs-client.conf.
terraform import gpucluster_beegfs_client.gpu01 gpu01
