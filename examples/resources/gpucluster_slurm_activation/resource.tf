# The one activation of every apply: after all nodes and partitions have written
# their fragments, slurm.conf is assembled and slurmctld restarted, reconfigured
# or, when the node set changes, stopped and started with slurmd restarted on
# each node once. The plan warns before a restart and names what restarts.
resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id

  depends_on = [gpucluster_slurm_node.gpu01, gpucluster_slurm_node.gpu02, gpucluster_slurm_partition.gpu]

  # Each wait: slurmctld answering after its restart, restarted nodes ready.
  timeouts {
    update = "5m"
  }
}
