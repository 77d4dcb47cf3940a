import {
  to = gpucluster_user.alice
  id = "alice@login01,gpu01,gpu02"
}
