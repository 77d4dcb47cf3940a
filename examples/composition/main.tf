# Composing with the module that creates the machines: the nodes' addresses and host keys come
# from another module's outputs and are known only at apply. The provider is configured from
# them; its plan-time checks that need a host wait for the apply, which runs them before it
# changes any host.
terraform {
  required_version = ">= 1.11"
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = "~> 0.1"
    }
  }
}

variable "gpu_servers" {
  description = "GPU servers to create, by host name."
  type        = list(string)
  default     = ["gpu01", "gpu02"]
}

variable "ssh_private_key_file" {
  description = "Private key of the admin account the machine images are built with."
  type        = string
  default     = "~/.ssh/id_ed25519"
}

variable "host_keys" {
  description = "The machines' ed25519 public host keys, by host name (only the stand-in module needs them)."
  type        = map(string)
  default = {
    login01 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBm3Vh7Vj7rQ1mYpVXc1t2cGq8yZlN3eP4u9aQJfH5sT"
    gpu01   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEwq2nL6oR8xT0yH4cKp9vB3mZ7uD1sJ5gF2aN8eQ6rW"
    gpu02   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ4kS9pX2vN7cB1mQ8rT5yL3hF6wD0eG9aK2uZ7oP1xV"
  }
}

locals {
  login_node = "login01"
  all_nodes  = concat([local.login_node], var.gpu_servers)
}

module "machines" {
  source    = "./machines"
  names     = local.all_nodes
  subnet    = "10.0.0.0/24"
  host_keys = var.host_keys
}

provider "gpucluster" {
  user             = "admin"
  private_key_file = var.ssh_private_key_file
  login_node       = local.login_node

  # Each machine's key, pinned under its name and its address: host keys stay checked,
  # although no known_hosts file has them yet.
  host_keys = [for name, host in module.machines.hosts : "${name},${host.address} ${host.host_key}"]

  # Resources name nodes by host name; these blocks say where each one is.
  dynamic "node" {
    for_each = module.machines.hosts
    content {
      name    = node.key
      address = node.value.address
    }
  }
}

resource "gpucluster_node" "all" {
  for_each = toset(local.all_nodes)
  name     = each.key
  roles    = each.key == local.login_node ? ["controller"] : ["compute"]
  # The machines are created in this apply: wait for SSH and their first boot (cloud-init).
  boot_timeout = "10m"
}

resource "gpucluster_group" "users" {
  name             = "users"
  gid              = 100
  allow_system_gid = true
  nodes            = [for n in gpucluster_node.all : n.name]
}

resource "gpucluster_user" "alice" {
  name    = "alice"
  uid     = 1001
  group   = gpucluster_group.users.name
  nodes   = [for n in gpucluster_node.all : n.name]
  home_on = local.login_node
}

resource "gpucluster_munge_key" "cluster" {
  controller = local.login_node
  nodes      = [for n in gpucluster_node.all : n.name]
}

resource "gpucluster_slurm_controller" "cluster" {
  node       = gpucluster_node.all[local.login_node].name
  depends_on = [gpucluster_munge_key.cluster]
}

resource "gpucluster_slurm_node" "gpu" {
  for_each   = toset(var.gpu_servers)
  controller = gpucluster_slurm_controller.cluster.id
  name       = gpucluster_node.all[each.key].name
}

resource "gpucluster_slurm_partition" "gpu" {
  controller = gpucluster_slurm_controller.cluster.id
  name       = "gpu"
  nodes      = [for n in gpucluster_slurm_node.gpu : n.id]
  default    = true
}

resource "gpucluster_slurm_activation" "cluster" {
  controller = gpucluster_slurm_controller.cluster.id
  depends_on = [gpucluster_slurm_node.gpu, gpucluster_slurm_partition.gpu]
}

resource "gpucluster_slurm_compute" "gpu" {
  for_each   = gpucluster_slurm_node.gpu
  node       = each.value.id
  controller = gpucluster_slurm_controller.cluster.slurmctld_host
  depends_on = [gpucluster_munge_key.cluster, gpucluster_slurm_activation.cluster]
}
