import {
  to = gpucluster_firewall.gpu01
  id = "gpu01"
}
