# The guide's cluster: login01 (controller, login node, jump host) and the GPU servers, with
# the cluster users, MUNGE, Slurm's controller, nodes and partition, configless compute nodes,
# BeeGFS (beegfs.tf) and the firewall (firewall.tf). The guide's values are the provider's
# defaults, so few settings appear here.
terraform {
  required_version = ">= 1.11"
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = "~> 0.1"
    }
  }
}

# GPU servers accept SSH only from login01: every other node is reached through it. The sudo
# password comes from GPUCLUSTER_SUDO_PASSWORD.
provider "gpucluster" {
  user             = "admin"
  private_key_file = var.ssh_private_key_file
  known_hosts_file = var.known_hosts_file
  login_node       = "login01"

  # Ubuntu 26.04 ships sudo-rs as sudo; the guide uses the classic one.
  sudo_exe = "/usr/bin/sudo.ws"

  node {
    name    = "login01"
    address = var.login_address
  }
}

locals {
  all_nodes = concat(["login01"], var.gpu_servers)

  # Fixed UIDs, never reused: shared storage records ownership as numbers.
  cluster_users = {
    alice = 1001
    bob   = 1002
  }
}

## Nodes and users --------------------------------------------------------------

resource "gpucluster_node" "login01" {
  name  = "login01"
  roles = ["controller"]
}

resource "gpucluster_node" "gpu" {
  for_each = toset(var.gpu_servers)

  name  = each.key
  roles = ["compute", "storage"]

  # /etc/ssh/sshd_config.d/90-allow-sudo.conf: only administrators log in.
  ssh_allow_groups = ["sudo"]
}

resource "gpucluster_group" "users" {
  name             = "users"
  gid              = 100
  allow_system_gid = true
  nodes            = local.all_nodes
}

resource "gpucluster_user" "cluster" {
  for_each = local.cluster_users

  name  = each.key
  uid   = each.value
  group = gpucluster_group.users.id
  nodes = local.all_nodes

  # Homes live on shared storage: created once, on login01, after BeeGFS is mounted over its
  # /home (beegfs.tf), so every node sees them with the same numeric owner.
  home_on = "login01"

  depends_on = [gpucluster_beegfs_client.login01]
}

## MUNGE and Slurm --------------------------------------------------------------

# Generated once on login01 and copied to every node; the key never enters the state.
resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = local.all_nodes

  depends_on = [gpucluster_node.login01, gpucluster_node.gpu]
}

# slurm.conf, cgroup.conf and gres.conf with the guide's values, cgroup plugins included.
resource "gpucluster_slurm_controller" "cluster" {
  node = "login01"

  # munged runs with the cluster's key before slurmctld starts (pitfall P10).
  depends_on = [gpucluster_munge_key.cluster]
}

# One NodeName line for servers with the same hardware (gpu[01-03]). Without gpu_files,
# gres.conf is AutoDetect=nvml.
resource "gpucluster_slurm_node" "gpu" {
  for_each = toset(var.gpu_servers)

  controller        = gpucluster_slurm_controller.cluster.id
  name              = each.key
  gres              = var.gpu_hardware.gres
  cpus              = var.gpu_hardware.cpus
  boards            = var.gpu_hardware.boards
  sockets_per_board = var.gpu_hardware.sockets_per_board
  cores_per_socket  = var.gpu_hardware.cores_per_socket
  threads_per_core  = var.gpu_hardware.threads_per_core
  real_memory       = var.gpu_hardware.real_memory
}

resource "gpucluster_slurm_partition" "gpu" {
  controller   = gpucluster_slurm_controller.cluster.id
  name         = "gpu"
  nodes        = [for n in gpucluster_slurm_node.gpu : n.id]
  default      = true
  max_time     = "3-00:00:00"
  allow_groups = [gpucluster_group.users.name]

  # A job without --mem gets 120 GB per GPU instead of the whole node (pitfall P4).
  def_mem_per_gpu = 120000
}

# slurm.conf, cgroup.conf and gres.conf assembled from all the fragments above and activated
# once per apply, however many nodes and partitions change: slurmctld restarts (or reconfigures)
# once, slurmd on each GPU server at most once.
resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id

  depends_on = [gpucluster_slurm_node.gpu, gpucluster_slurm_partition.gpu, gpucluster_slurm_accounting.cluster]
}

# slurmd (and the NVML plugin) on each GPU server, configured only by --conf-server login01:6817.
resource "gpucluster_slurm_compute" "gpu" {
  for_each = gpucluster_slurm_node.gpu

  node       = each.value.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host

  # The node is defined and in the partition on the controller when it registers.
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster]
}

# The guide's verification: munge -n | unmunge across nodes, scontrol ping, sinfo -a, and
# findmnt -n -o FSTYPE /home (beegfs on every node).
data "gpucluster_cluster_check" "guide" {
  controller  = "login01"
  nodes       = local.all_nodes
  home_fstype = "beegfs"

  depends_on = [gpucluster_slurm_compute.gpu, gpucluster_beegfs_client.gpu]
}

output "cluster_ok" {
  description = "True when the guide's verification found no problem."
  value       = data.gpucluster_cluster_check.guide.ok
}

output "cluster_problems" {
  description = "What the guide's verification found wrong, one sentence per problem."
  value       = data.gpucluster_cluster_check.guide.problems
}

output "node_states" {
  description = "Each node's state from sinfo -a."
  value       = data.gpucluster_cluster_check.guide.node_states
}

output "home_mounts" {
  description = "What each node has mounted on /home (beegfs when BeeGFS is there)."
  value       = data.gpucluster_cluster_check.guide.home_mounts
}
