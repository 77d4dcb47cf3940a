import {
  to = gpucluster_firewall_rule.slurmd
  id = "gpu01:allow:6818/tcp:from=10.0.0.0/24"
}
