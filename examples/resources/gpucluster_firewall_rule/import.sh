# NODE:ACTION:PORT/PROTO:from=SOURCE, as the rule's id shows it. SOURCE is any, an address or a
# CIDR, read as `from` is: 10.0.0.7/24 imports the rule from 10.0.0.0/24, as UFW stores it.
terraform import gpucluster_firewall_rule.slurmd gpu01:allow:6818/tcp:from=10.0.0.0/24
# A rule listed in the node's ownership ledger (/var/lib/gpucluster/firewall-rules) is managed by a
# resource in some state and is not imported again. To move it between states, remove it from
# the owning state (terraform state rm), delete its line from the ledger on the node, then import.
# Import only reads: the next apply records the rule in the ledger (recorded = false -> true).
