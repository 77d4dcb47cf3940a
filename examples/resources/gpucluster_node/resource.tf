resource "gpucluster_node" "login01" {
  name  = "login01"
  roles = ["controller"]
}

resource "gpucluster_node" "gpu01" {
  name    = "gpu01"
  address = "10.0.0.11"
  roles   = ["compute", "storage"]

  # The guide's /etc/ssh/sshd_config.d/90-allow-sudo.conf: only administrators log in.
  ssh_allow_groups = ["sudo"]
}

output "gpu01_hardware" {
  value = "${gpucluster_node.gpu01.cpus} CPUs, ${gpucluster_node.gpu01.real_memory} MB, ${gpucluster_node.gpu01.gpu_count} GPUs"
}
