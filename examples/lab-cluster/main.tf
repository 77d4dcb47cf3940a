# The example cluster that `make demo` applies to the local lab: login01 plus the GPU servers,
# the guide's "users" group and two cluster users with the same UIDs on every node.
terraform {
  required_version = ">= 1.11"
  required_providers {
    gpucluster = {
      source = "gpucluster/gpucluster"
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

variable "sudo_password" {
  description = "sudo password of the admin account."
  type        = string
  sensitive   = true
}

variable "login_address" {
  description = "Address of login01 as seen from where Terraform runs."
  type        = string
  default     = "10.0.0.10"
}

variable "gpu_servers" {
  description = "Names of the GPU servers."
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
}

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
