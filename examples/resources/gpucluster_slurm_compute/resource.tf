# A configless compute node: slurmd (plus the NVML plugin where real NVIDIA GPUs
# are), one line in /etc/default/slurmd, no slurm.conf. The apply ends when
# the controller sees the node idle.
resource "gpucluster_slurm_compute" "gpu01" {
  node       = gpucluster_slurm_node.gpu01.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host

  # MUNGE first (pitfall P10); the activation first, so the node is defined and
  # in its partition on the controller when it registers.
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster]

  # The node registers within seconds when MUNGE and the network work.
  timeouts {
    create = "5m"
  }
}
