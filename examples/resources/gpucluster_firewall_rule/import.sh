# NODE:ACTION:PORT/PROTO:from=SOURCE, as the rule's id shows it. SOURCE is any, an address or a
# CIDR in canonical form (10.0.0.0/24, not 10.0.0.7/24).
terraform import gpucluster_firewall_rule.slurmd gpu01:allow:6818/tcp:from=10.0.0.0/24
