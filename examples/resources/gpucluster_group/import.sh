# NAME@NODE1,NODE2,... imports the group from those nodes; NAME alone uses every node of the
# provider's node blocks. The import fails, naming each node, when the GIDs differ.
terraform import gpucluster_group.users users@login01,gpu01,gpu02
