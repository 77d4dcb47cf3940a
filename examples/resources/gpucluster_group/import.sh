# NAME@NODE1,NODE2,...: the group and the nodes of the resource's nodes (its id is the name alone:
# add the nodes, which import never guesses, since destroy deletes the group there). The group
# must exist with one GID on every listed node (the import names each node otherwise). An imported
# group is the resource's own on every listed node: destroy, or removing a node from nodes,
# deletes it there. To stop managing it without deleting it, use a removed block with lifecycle {
# destroy = false }.
# Import only reads: the next apply records the GID in the ledger on the login node (recorded =
# false -> true). A GID the ledger gave to another name is refused.
terraform import gpucluster_group.users users@login01,gpu01,gpu02
