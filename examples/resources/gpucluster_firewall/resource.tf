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

  # The reference orders the SSH rule first and lets the plan prove the provider keeps access.
  ssh_rule = gpucluster_firewall_rule.ssh.id

  # Every other rule is in place before UFW starts filtering.
  depends_on = [gpucluster_firewall_rule.cluster]
}
