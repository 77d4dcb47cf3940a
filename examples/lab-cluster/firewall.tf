# The guide's firewall on the lab, as in examples/cluster/firewall.tf: deny incoming by
# default, then allow only the table's ports. The table is data, one row per rule, tagged with
# the group it applies to; the for_each below turns it into one gpucluster_firewall_rule per
# row and node of the row's group. The lab's containers hold no BeeGFS, but the rows stay: they
# show which node gets which port.

variable "cluster_subnet" {
  description = "The lab's subnet, the source of every cluster rule (the guide's firewall_subnet)."
  type        = string
  default     = "10.0.0.0/24"
}

variable "compute_only_servers" {
  description = "GPU servers (also in gpu_servers) that hold no BeeGFS storage target: they get no BeeGFS storage ports."
  type        = list(string)
  default     = []
}

locals {
  # The guide's inventory groups. A GPU server in compute_only_servers runs slurmd but holds
  # no BeeGFS storage target, so it gets no BeeGFS storage ports.
  firewall_groups = {
    controller     = ["login01"]
    compute        = var.gpu_servers
    beegfs_storage = [for s in var.gpu_servers : s if !contains(var.compute_only_servers, s)]
    all            = local.all_nodes
  }

  # roles/firewall/defaults/main.yml of the guide.
  firewall_table = [
    { group = "controller", port = "22", proto = "tcp", src = "any", comment = "SSH" },
    { group = "compute", port = "22", proto = "tcp", src = var.login_address, comment = "SSH from login node" },
    { group = "controller", port = "6817", proto = "tcp", src = var.cluster_subnet, comment = "slurmctld" },
    # Subnet-wide, not just from login01: slurmds forward launches to each other (pitfall P5).
    { group = "compute", port = "6818", proto = "tcp", src = var.cluster_subnet, comment = "slurmd" },
    # On every node: srun also runs inside batch jobs on the GPU servers (pitfall P6).
    { group = "all", port = "60001:61000", proto = "tcp", src = var.cluster_subnet, comment = "srun callbacks" },
    { group = "all", port = "8004", proto = "udp", src = var.cluster_subnet, comment = "BeeGFS client" },
    { group = "controller", port = "8005", proto = "any", src = var.cluster_subnet, comment = "BeeGFS meta" },
    { group = "controller", port = "8008", proto = "any", src = var.cluster_subnet, comment = "BeeGFS mgmtd" },
    { group = "controller", port = "8010", proto = "tcp", src = var.cluster_subnet, comment = "BeeGFS mgmtd API" },
    { group = "beegfs_storage", port = "8003", proto = "any", src = var.cluster_subnet, comment = "BeeGFS storage" },
  ]

  # Rows x nodes of the row's group, keyed "gpu01 6818/tcp".
  firewall_rules = merge([
    for row in local.firewall_table : {
      for node in local.firewall_groups[row.group] :
      "${node} ${row.port}/${row.proto}" => merge(row, { node = node })
    }
  ]...)
}

resource "gpucluster_firewall_rule" "table" {
  for_each = local.firewall_rules

  node    = each.value.node
  port    = each.value.port
  proto   = each.value.proto
  from    = each.value.src
  comment = each.value.comment
}

# UFW with the guide's defaults on every node, enabled only after all of that node's rules are
# in place: rules lists their ids, which orders them first, lets the plan check the node's
# whole rule set (lockout, pitfalls P5 and P6) before the rules exist, and makes the apply
# refuse to enable UFW while one of them is missing.
resource "gpucluster_firewall" "node" {
  for_each = toset(local.all_nodes)

  node             = each.key
  default_incoming = "deny"
  default_outgoing = "allow"
  rules            = [for r in gpucluster_firewall_rule.table : r.id if r.node == each.key]

  # The plan reads SrunPortRange and SlurmdPort from the controller's slurm.conf.
  slurm_controller = gpucluster_slurm_controller.cluster.id
}
