# Debian and Ubuntu already have "users" with GID 100; the resource adopts it everywhere.
resource "gpucluster_group" "users" {
  name             = "users"
  gid              = 100
  allow_system_gid = true
  nodes            = ["login01", "gpu01", "gpu02"]
}
