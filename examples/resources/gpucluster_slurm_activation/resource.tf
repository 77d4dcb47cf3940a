resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]
}

resource "gpucluster_slurm_controller" "cluster" {
  node       = "login01"
  depends_on = [gpucluster_munge_key.cluster]
}

resource "gpucluster_slurm_node" "gpu" {
  for_each   = toset(["gpu01", "gpu02"])
  controller = gpucluster_slurm_controller.cluster.id
  name       = each.key
}

resource "gpucluster_slurm_partition" "gpu" {
  controller = gpucluster_slurm_controller.cluster.id
  name       = "gpu"
  nodes      = [for n in gpucluster_slurm_node.gpu : n.id]
  default    = true
}

# The one activation of every apply: after all nodes and partitions have written
# their fragments, slurm.conf is assembled and slurmctld restarted, reconfigured
# or, when the node set changes, stopped and started with slurmd restarted on
# each node once. The plan warns before a restart and names what restarts.
resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id

  depends_on = [gpucluster_slurm_node.gpu, gpucluster_slurm_partition.gpu]

  # Each wait: slurmctld answering after its restart, restarted nodes ready.
  timeouts {
    update = "5m"
  }
}
