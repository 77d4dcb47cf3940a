# NODE:PATH; node_num_id is read from the directory's nodeNumID.
terraform import gpucluster_beegfs_metadata.cluster login01:/beegfs/meta
