# slurmd on a GPU server, open to the whole cluster subnet: slurmd forwards job launches to
# other slurmds, so restricting it to login01 breaks multi-node jobs.
resource "gpucluster_firewall_rule" "slurmd" {
  node    = "gpu01"
  port    = "6818"
  proto   = "tcp"
  from    = "10.0.0.0/24"
  comment = "slurmd"
}

# A range needs proto tcp or udp; UFW refuses a range with proto any.
resource "gpucluster_firewall_rule" "srun" {
  node    = "gpu01"
  port    = "60001:61000"
  proto   = "tcp"
  from    = "10.0.0.0/24"
  comment = "srun callbacks"
}
