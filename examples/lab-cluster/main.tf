# The example cluster that `make demo` applies to the local lab: the guide's whole setup
# (users, MUNGE, Slurm controller, GPU nodes, partition, configless compute nodes, BeeGFS in
# beegfs.tf and the guide's firewall in firewall.tf) on login01 plus the GPU servers, with the
# few settings the lab's containers need. examples/cluster is the same setup for real servers.
terraform {
  required_version = ">= 1.11"
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = "~> 0.1"
    }
  }
}

variable "ssh_private_key_file" {
  description = "Private key of the admin account."
  type        = string
}

variable "known_hosts_file" {
  description = "known_hosts with every node's host key."
  type        = string
}

# Ephemeral (Terraform 1.10 or later) as well as sensitive: Terraform writes the value of every
# other variable into a saved plan (terraform plan -out), where anyone who can read the plan
# file reads the password. An ephemeral value reaches the provider's configuration and is kept
# in neither the state nor a plan file; `terraform apply PLANFILE` asks for it again.
variable "sudo_password" {
  description = "sudo password of the admin account. Ephemeral: never in the state or a saved plan; give it again (-var-file or TF_VAR_sudo_password) to apply a saved plan."
  type        = string
  sensitive   = true
  ephemeral   = true
}

variable "login_address" {
  description = "Address of login01 as seen from where Terraform runs."
  type        = string
  default     = "10.0.0.10"
}

variable "gpu_servers" {
  description = "Names of the GPU servers. Adding a GPU server is adding its name here."
  type        = list(string)
  default     = ["gpu01", "gpu02"]
}

provider "gpucluster" {
  user             = "admin"
  private_key_file = var.ssh_private_key_file
  known_hosts_file = var.known_hosts_file
  sudo_password    = var.sudo_password
  login_node       = "login01"

  node {
    name    = "login01"
    address = var.login_address
  }
}

locals {
  all_nodes = concat(["login01"], var.gpu_servers)

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

  name             = each.key
  roles            = ["compute", "storage"]
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

  name    = each.key
  uid     = each.value
  group   = gpucluster_group.users.id
  nodes   = local.all_nodes
  home_on = "login01"

  # Created on BeeGFS, once login01 has it over /home.
  depends_on = [gpucluster_beegfs_client.login01]
}

## MUNGE and Slurm --------------------------------------------------------------

resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = local.all_nodes

  depends_on = [gpucluster_node.login01, gpucluster_node.gpu]
}

resource "gpucluster_slurm_controller" "cluster" {
  node = "login01"

  # The lab's containers cannot use Slurm's cgroup plugins (their cgroups are read-only).
  # A real cluster keeps the guide's defaults (examples/cluster).
  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = "task/none"
  job_acct_gather_type = "jobacct_gather/none"
  # Slurm 26.05's slurmd (the forky lab's) refuses to start beside the mix of cgroup v1 and
  # v2 the lab's hosts see; with the plugins above nothing needs cgroups anyway.
  cgroup = { plugin = "disabled" }

  # munged runs with the cluster's key before slurmctld starts (pitfall P10).
  depends_on = [gpucluster_munge_key.cluster]
}

# Hardware defaults to what the node itself reports, so it never exceeds the container.
# The stand-in GPUs are invisible to NVML: name them and their device files.
resource "gpucluster_slurm_node" "gpu" {
  for_each = toset(var.gpu_servers)

  controller = gpucluster_slurm_controller.cluster.id
  name       = each.key
  gres       = "gpu:4"
  gpu_files  = "/dev/nvidia[0-3]"
}

resource "gpucluster_slurm_partition" "gpu" {
  controller   = gpucluster_slurm_controller.cluster.id
  name         = "gpu"
  nodes        = [for n in gpucluster_slurm_node.gpu : n.id]
  default      = true
  max_time     = "3-00:00:00"
  allow_groups = [gpucluster_group.users.name]

  # The guide's 120000 MB per GPU is more than a lab host has: a quarter of the smallest
  # node's memory keeps the guide's point, four one-GPU jobs fit on a node.
  def_mem_per_gpu = floor(min([for n in gpucluster_slurm_node.gpu : n.real_memory]...) / 4)
}

# slurm.conf, cgroup.conf and gres.conf assembled from all the fragments above and activated
# once per apply, however many nodes and partitions change: slurmctld restarts (or reconfigures)
# once, slurmd on each GPU server at most once.
resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id

  depends_on = [gpucluster_slurm_node.gpu, gpucluster_slurm_partition.gpu, gpucluster_slurm_accounting.cluster]
}

resource "gpucluster_slurm_compute" "gpu" {
  for_each = gpucluster_slurm_node.gpu

  node       = each.value.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host

  # The node is defined and in the partition on the controller when it registers.
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster]
}

# The guide's verification: MUNGE across nodes, scontrol ping, sinfo -a, findmnt /home.
data "gpucluster_cluster_check" "guide" {
  controller  = "login01"
  nodes       = local.all_nodes
  home_fstype = "tmpfs" # the lab's BeeGFS stand-in; beegfs on a real cluster

  depends_on = [gpucluster_slurm_compute.gpu, gpucluster_beegfs_client.gpu]
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
  description = "The guide's verification, read after the compute nodes are up."
  value = {
    ok              = data.gpucluster_cluster_check.guide.ok
    problems        = data.gpucluster_cluster_check.guide.problems
    controller_ping = data.gpucluster_cluster_check.guide.controller_ping
    munge           = data.gpucluster_cluster_check.guide.munge
    node_states     = data.gpucluster_cluster_check.guide.node_states
    home_mounts     = data.gpucluster_cluster_check.guide.home_mounts
  }
}
