# NODE:ACTION:PORT/PROTO:from=SOURCE, as the rule's id shows it. SOURCE is any, an address or a
# CIDR, read as `from` is: 10.0.0.7/24 imports the rule from 10.0.0.0/24, as UFW stores it.
terraform import gpucluster_firewall_rule.slurmd gpu01:allow:6818/tcp:from=10.0.0.0/24
