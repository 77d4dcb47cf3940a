# CONTROLLER@NODE1,NODE2,... adopts the key on the controller and the listed nodes; CONTROLLER
# alone uses every node of the provider's node blocks. The controller is always one of the nodes.
# Only the key's fingerprint is read: the key never enters the state.
terraform import gpucluster_munge_key.cluster login01@login01,gpu01,gpu02
