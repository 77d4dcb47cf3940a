# A configless compute node: slurmd (plus the NVML plugin where real NVIDIA GPUs
# are), one line in /etc/default/slurmd, no slurm.conf. The apply ends when
# the controller sees the node idle.
resource "gpucluster_slurm_compute" "gpu01" {
  node       = gpucluster_slurm_node.gpu01.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host

  # MUNGE first (pitfall P10); the partition first, so the node is in it when
  # it registers.
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_partition.gpu]
}
