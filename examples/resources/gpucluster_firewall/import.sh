# The node. Destroy after an import restores the state found at import. rules lists every rule
# on the node and ssh_rule stays unset; slurm_controller is the node itself when slurmctld is
# enabled there, else, when slurmd is, the host of --conf-server in /etc/default/slurmd.
# Import only reads: the next apply writes the node's marker (recorded = false -> true).
terraform import gpucluster_firewall.gpu01 gpu01
