resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]
}

resource "gpucluster_slurm_controller" "cluster" {
  node       = "login01"
  depends_on = [gpucluster_munge_key.cluster]
}

resource "gpucluster_slurm_node" "gpu" {
  for_each   = toset(["gpu01", "gpu02"])
  controller = gpucluster_slurm_controller.cluster.id
  name       = each.key
}

# The guide's partition. Refer to the nodes by id: they are unknown until the
# nodes exist, so the plan-time check that every node is defined (pitfall P14)
# waits for nodes created in the same apply.
resource "gpucluster_slurm_partition" "gpu" {
  controller   = gpucluster_slurm_controller.cluster.id
  name         = "gpu"
  nodes        = [for n in gpucluster_slurm_node.gpu : n.id]
  default      = true
  max_time     = "3-00:00:00" # days-hours:minutes:seconds; "forever" fails at plan
  allow_groups = ["users"]

  # Without a default, a job that omits --mem gets the whole node's memory and
  # blocks the other GPUs (pitfall P4: the plan warns). 120000 MB per GPU fits
  # the guide's servers (4 GPUs, RealMemory=500000); the plan refuses a value
  # above a node's memory.
  def_mem_per_gpu = 120000

  # Other settings by their Slurm names; times and memory sizes are checked at plan.
  extra = {
    DefaultTime = "1:00:00"
  }
}
