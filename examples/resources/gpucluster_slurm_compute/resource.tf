resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = ["login01", "gpu01"]
}

resource "gpucluster_slurm_controller" "cluster" {
  node       = "login01"
  depends_on = [gpucluster_munge_key.cluster]
}

resource "gpucluster_slurm_node" "gpu01" {
  controller = gpucluster_slurm_controller.cluster.id
  name       = "gpu01"
}

resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id
  depends_on = [gpucluster_slurm_node.gpu01]
}

# A configless compute node: slurmd (plus the NVML plugin where real NVIDIA GPUs
# are), one line in /etc/default/slurmd, no slurm.conf. The apply ends when
# the controller sees the node idle.
resource "gpucluster_slurm_compute" "gpu01" {
  node       = gpucluster_slurm_node.gpu01.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host

  # MUNGE first (pitfall P10); the activation first, so the node is defined and
  # in its partition on the controller when it registers.
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster]

  # The node registers within seconds when MUNGE and the network work; the
  # default create timeout is 2 minutes.
  timeouts {
    create = "5m"
  }
}
