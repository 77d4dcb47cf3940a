import {
  to = gpucluster_group.users
  id = "users@login01,gpu01,gpu02"
}
