# The node's name; the mount path and management host are read from the node's
# /etc/beegfs/beegfs-mounts.conf and beegfs-client.conf. Destroy stops and disables
# beegfs-client, which unmounts BeeGFS; nothing on BeeGFS is touched.
terraform import gpucluster_beegfs_client.gpu01 gpu01
