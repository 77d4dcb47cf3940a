# NAME@NODE1,NODE2,... imports the user from those nodes; NAME alone uses every node of the
# provider's node blocks. The import fails, naming each node, when the UIDs differ.
terraform import gpucluster_user.alice alice@login01,gpu01,gpu02
