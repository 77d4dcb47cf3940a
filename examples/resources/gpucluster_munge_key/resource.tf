resource "gpucluster_munge_key" "cluster" {
  # The key is generated here (or, if login01 already has one, adopted) and
  # copied to every node; the controller is one of the nodes.
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]

  # Change this value to generate a new key everywhere, e.g. after a node
  # left the cluster for good.
  rotation = "2025-01"
}

# Slurm authenticates every message with MUNGE: Slurm resources should refer
# to this one (or depends_on it), so munged runs with the key on every node,
# restarted where it changed, before any Slurm daemon starts.
output "munge_key_fingerprint" {
  value = gpucluster_munge_key.cluster.fingerprint
}
