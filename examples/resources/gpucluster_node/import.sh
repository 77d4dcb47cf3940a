# A node is imported by its name. It is then dialled by that name, which a provider node block
# may map to an address; an existing /etc/ssh/sshd_config.d/90-allow-sudo.conf on the node
# becomes ssh_allow_groups. roles are read from the enabled units: slurmctld gives controller,
# slurmd compute, beegfs-storage storage.
terraform import gpucluster_node.gpu01 gpu01
