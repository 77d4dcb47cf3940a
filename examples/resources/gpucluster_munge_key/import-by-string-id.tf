import {
  to = gpucluster_munge_key.cluster
  id = "login01@login01,gpu01,gpu02"
}
