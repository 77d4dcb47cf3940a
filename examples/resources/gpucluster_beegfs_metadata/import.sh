# NODE:PATH; node_num_id is read from the directory's nodeNumID, mgmtd_host from
# /etc/beegfs/beegfs-meta.conf. Destroy stops and disables beegfs-meta and removes the provider's
# drop-in; the metadata directory stays untouched.
terraform import gpucluster_beegfs_metadata.cluster login01:/beegfs/meta
