# The guide's firewall: deny incoming by default, then allow only the table's ports. The table
# is data, one row per rule, tagged with the group it applies to; the for_each blocks below turn
# it into one gpucluster_firewall_rule per row and node of the row's group.
#
# login01's rules and firewall are resources of their own, apart from the GPU servers', so the
# guide's rollout, login01 alone first, is one target that plans login01 and nothing else:
#   terraform apply -target=gpucluster_firewall.login01
# A -target also plans everything its resource references. Were login01's firewall one instance
# of a for_each over all nodes, listing its rules from a rule resource shared by all nodes would
# pull in every node's rules; slurm_controller is the controller's name, not a reference to
# gpucluster_slurm_controller, for the same reason (a reference would pull in the controller, the
# MUNGE key and every node).

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

  # Each node's rows, keyed "6818/tcp".
  firewall_rows = {
    for node in local.all_nodes : node => {
      for row in local.firewall_table : "${row.port}/${row.proto}" => row
      if contains(local.firewall_groups[row.group], node)
    }
  }

  # The GPU servers' rows x nodes, keyed "gpu01 6818/tcp".
  gpu_firewall_rules = merge([
    for node in var.gpu_servers : {
      for key, row in local.firewall_rows[node] : "${node} ${key}" => merge(row, { node = node })
    }
  ]...)
}

resource "gpucluster_firewall_rule" "login01" {
  for_each = local.firewall_rows["login01"]

  node    = "login01"
  port    = each.value.port
  proto   = each.value.proto
  from    = each.value.src
  comment = each.value.comment
}

resource "gpucluster_firewall_rule" "gpu" {
  for_each = local.gpu_firewall_rules

  node    = each.value.node
  port    = each.value.port
  proto   = each.value.proto
  from    = each.value.src
  comment = each.value.comment
}

# UFW with the guide's defaults, enabled only after all of the node's rules are in place: rules
# lists their ids, which orders them first, lets the plan check the node's whole rule set
# (lockout, pitfalls P5 and P6) before the rules exist, and makes the apply refuse to enable UFW
# while one of them is missing. slurm_controller: the plan reads SrunPortRange and SlurmdPort
# from login01's slurm.conf once it exists.
resource "gpucluster_firewall" "login01" {
  node             = "login01"
  default_incoming = "deny"
  default_outgoing = "allow"
  rules            = [for r in gpucluster_firewall_rule.login01 : r.id]
  slurm_controller = "login01"
}

resource "gpucluster_firewall" "gpu" {
  for_each = toset(var.gpu_servers)

  node             = each.key
  default_incoming = "deny"
  default_outgoing = "allow"
  rules            = [for r in gpucluster_firewall_rule.gpu : r.id if r.node == each.key]
  slurm_controller = "login01"
}
