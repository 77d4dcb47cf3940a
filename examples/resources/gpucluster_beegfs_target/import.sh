# NODE:PATH. node_num_id and target_id are read from the target's nodeNumID and targetNumID files.
terraform import gpucluster_beegfs_target.gpu02 gpu02:/data/beegfs-storage
