import {
  to = gpucluster_node.gpu01
  id = "gpu01"
}
