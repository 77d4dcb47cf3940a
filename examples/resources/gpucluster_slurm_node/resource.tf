resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]
}

resource "gpucluster_slurm_controller" "cluster" {
  node       = "login01"
  depends_on = [gpucluster_munge_key.cluster]
}

# A GPU server. CPUs, sockets, cores, threads and RealMemory default to what
# `slurmd -C` reports on the node (lscpu and /proc/meminfo before slurmd is
# installed there); gres defaults to gpu:N when nvidia-smi lists N GPUs.
resource "gpucluster_slurm_node" "gpu01" {
  controller = gpucluster_slurm_controller.cluster.id
  name       = "gpu01"
}

# GPUs that NVML does not see: name them, and list their device files for an
# explicit gres.conf line. Nodes with the same hardware share one
# NodeName=gpu[01-02] line.
resource "gpucluster_slurm_node" "gpu02" {
  controller = gpucluster_slurm_controller.cluster.id
  name       = "gpu02"
  gres       = "gpu:4"
  gpu_files  = "/dev/nvidia[0-3]"

  # The guide's value, in megabytes as slurmd -C reports it. Rounding RealMemory
  # down is fine; above what the node reports is a plan error (pitfall P3).
  real_memory = 500000
}

# Maintenance: gpu03 is drained, so no new job starts there and the jobs running
# there finish; removing drain_reason resumes it. No daemon restarts.
resource "gpucluster_slurm_node" "gpu03" {
  controller   = gpucluster_slurm_controller.cluster.id
  name         = "gpu03"
  drain_reason = "GPU driver update"
}
