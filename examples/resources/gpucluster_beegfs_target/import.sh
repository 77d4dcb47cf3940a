# NODE:PATH. node_num_id and target_id are read from the target's nodeNumID and targetNumID files.
# Destroy takes the target out of beegfs-storage.conf's lists and removes the provider's drop-in;
# the directory and its data stay unless force_destroy_data is set.
terraform import gpucluster_beegfs_target.gpu02 gpu02:/data/beegfs-storage
