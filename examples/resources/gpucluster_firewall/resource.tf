# The guide's rules for one GPU server, then UFW with deny incoming, allow outgoing.
locals {
  subnet = "10.0.0.0/24"
  rules = {
    slurmd = { port = "6818", proto = "tcp", comment = "slurmd" }
    srun   = { port = "60001:61000", proto = "tcp", comment = "srun callbacks" }
    beegfs = { port = "8004", proto = "udp", comment = "BeeGFS client" }
  }
}

# The provider reaches GPU servers through login01, so this rule keeps it connected.
resource "gpucluster_firewall_rule" "ssh" {
  node    = "gpu01"
  port    = "22"
  proto   = "tcp"
  from    = "10.0.0.10"
  comment = "SSH from login node"
}

resource "gpucluster_firewall_rule" "cluster" {
  for_each = local.rules
  node     = "gpu01"
  port     = each.value.port
  proto    = each.value.proto
  from     = local.subnet
  comment  = each.value.comment
}

resource "gpucluster_firewall" "gpu01" {
  node             = "gpu01"
  default_incoming = "deny"
  default_outgoing = "allow"

  # Every rule of the node, referenced by id: they are created first, the plan checks them
  # (lockout, slurmd's port open to the subnet) before they exist, and the apply refuses to
  # enable UFW while one is missing. ssh_rule may name the SSH rule on its own instead.
  rules = concat([gpucluster_firewall_rule.ssh.id], [for r in gpucluster_firewall_rule.cluster : r.id])

  # The plan warns when the controller's slurm.conf has no SrunPortRange (pitfall P6).
  slurm_controller = "login01"
}
