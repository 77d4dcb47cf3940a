resource "gpucluster_node" "login01" {
  name  = "login01"
  roles = ["controller"]
}

resource "gpucluster_node" "gpu01" {
  name = "gpu01"
  # How this resource alone dials gpu01. Every other resource dials gpu01 by name: to give them
  # all this address, set it in a provider node block (name = "gpu01", address = "10.0.0.11").
  address = "10.0.0.11"
  roles   = ["compute", "storage"]

  # The guide's /etc/ssh/sshd_config.d/90-allow-sudo.conf: only administrators log in.
  ssh_allow_groups = ["sudo"]
}

output "gpu01_hardware" {
  value = "${gpucluster_node.gpu01.cpus} CPUs, ${gpucluster_node.gpu01.real_memory} MB, ${gpucluster_node.gpu01.gpu_count} GPUs"
}
