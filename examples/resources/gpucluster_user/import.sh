# NAME@NODE1,NODE2,...: the user and the nodes of the resource's nodes (its id is the name alone:
# add the nodes, which import never guesses, since destroy deletes the account there). The account
# must exist with one UID on every listed node (the import names each node otherwise). An imported
# account is the resource's own on every listed node: destroy, or removing a node from nodes,
# deletes it there (never its home). To stop managing it without deleting it, use a removed block
# with lifecycle { destroy = false }.
# Import only reads: the next apply records the UID in the ledger on the login node (recorded =
# false -> true). A UID the ledger gave to another name is refused.
terraform import gpucluster_user.alice alice@login01,gpu01,gpu02
