# The guide's cluster: login01 (controller, login node, jump host) and the GPU servers, with
# the cluster users, MUNGE, Slurm's controller, nodes and partition, configless compute nodes,
# BeeGFS (beegfs.tf), the firewall (firewall.tf) and, when asked for, accounting
# (accounting.tf). The guide's values are the provider's defaults or the variables' defaults
# (variables.tf), so a plan needs only the connection settings.
terraform {
  required_version = ">= 1.11"
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = "~> 0.1"
    }
  }
}

# GPU servers accept SSH only from login01: every other node is reached through it.
provider "gpucluster" {
  user             = "admin"
  private_key_file = var.ssh_private_key_file
  known_hosts_file = var.known_hosts_file
  sudo_password    = var.sudo_password
  login_node       = "login01"
  sudo_exe         = var.sudo_exe

  node {
    name    = "login01"
    address = var.login_address
  }
}

locals {
  all_nodes = concat(["login01"], var.gpu_servers)

  # gpu:4 or gpu:TYPE:4: the count is what a GPU server's memory is shared among.
  gpus_per_server = tonumber(regex("[0-9]+$", var.gpu_hardware.gres))
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

# Fixed UIDs, never reused: shared storage records ownership as numbers.
resource "gpucluster_user" "cluster" {
  for_each = var.cluster_users

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

# slurm.conf, cgroup.conf and gres.conf with the guide's values; slurm_plugins keeps the guide's
# cgroup plugins unless the hosts cannot delegate cgroups (variables.tf).
resource "gpucluster_slurm_controller" "cluster" {
  node = "login01"

  proctrack_type       = var.slurm_plugins.proctrack_type
  task_plugin          = var.slurm_plugins.task_plugin
  job_acct_gather_type = var.slurm_plugins.job_acct_gather_type
  cgroup               = { plugin = var.slurm_plugins.cgroup_plugin }

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
  gpu_files         = var.gpu_hardware.gpu_files
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

  # A job without --mem gets its share per GPU instead of the whole node (pitfall P4).
  def_mem_per_gpu = var.def_mem_per_gpu != null ? var.def_mem_per_gpu : floor(min([for n in gpucluster_slurm_node.gpu : n.real_memory]...) / local.gpus_per_server)
}

# slurm.conf, cgroup.conf and gres.conf assembled from all the fragments above and activated
# once per apply, however many nodes and partitions change: slurmctld restarts (or reconfigures)
# once, slurmd on each GPU server at most once. After the users, as the guide's play runs its
# users role first: slurmctld resolves the partition's AllowGroups when it starts, and refuses a
# user created after that ("User's group not permitted") until its next group refresh.
resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id

  depends_on = [gpucluster_slurm_node.gpu, gpucluster_slurm_partition.gpu, gpucluster_slurm_accounting.cluster, gpucluster_user.cluster]
}

# slurmd (and the NVML plugin) on each GPU server, configured only by --conf-server login01:6817.
resource "gpucluster_slurm_compute" "gpu" {
  for_each = gpucluster_slurm_node.gpu

  node       = each.value.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host

  # The node is defined and in the partition on the controller when it registers.
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster]
}

# The guide's verification: munge -n | unmunge across nodes, scontrol ping, sinfo -a,
# findmnt -n -o FSTYPE /home (beegfs on every node) and, on login01, beegfs health check.
data "gpucluster_cluster_check" "guide" {
  controller        = "login01"
  nodes             = local.all_nodes
  home_fstype       = var.home_fstype
  beegfs_mgmtd_host = "login01"

  depends_on = [gpucluster_slurm_compute.gpu, gpucluster_beegfs_client.gpu, gpucluster_beegfs_target.gpu]
}

## Outputs ----------------------------------------------------------------------

output "users" {
  description = "UID of each cluster user and its state on every node."
  value = {
    for name, u in gpucluster_user.cluster : name => {
      uid         = u.uid
      node_status = u.node_status
    }
  }
}

output "gpus" {
  description = "GPUs each GPU server reports."
  value       = { for name, n in gpucluster_node.gpu : name => n.gpu_count }
}

output "cluster_check" {
  description = "The guide's verification, read on the hosts after the compute nodes are up: ok is true when it found no problem; problems names each node and what is wrong there."
  value = {
    ok              = data.gpucluster_cluster_check.guide.ok
    problems        = data.gpucluster_cluster_check.guide.problems
    controller_ping = data.gpucluster_cluster_check.guide.controller_ping
    munge           = data.gpucluster_cluster_check.guide.munge
    node_status     = data.gpucluster_cluster_check.guide.node_status
    home_mounts     = data.gpucluster_cluster_check.guide.home_mounts
    beegfs_healthy  = data.gpucluster_cluster_check.guide.beegfs_healthy
  }
}
