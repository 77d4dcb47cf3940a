locals {
  all_nodes = ["login01", "gpu01", "gpu02"]
}

resource "gpucluster_group" "users" {
  name             = "users"
  gid              = 100
  allow_system_gid = true
  nodes            = local.all_nodes
}

resource "gpucluster_user" "alice" {
  name  = "alice"
  uid   = 1001
  group = gpucluster_group.users.id
  nodes = local.all_nodes

  # Create /home/alice once, on the node that holds the shared /home.
  home_on = "login01"
}

# A second administrator, identical on every node. Administrator groups need the
# opt-in; the account the provider logs in as (admin) is never managed here.
resource "gpucluster_user" "operator" {
  name               = "ops"
  uid                = 1090
  group              = gpucluster_group.users.id
  groups             = ["sudo"]
  allow_admin_groups = true
  nodes              = local.all_nodes
}
