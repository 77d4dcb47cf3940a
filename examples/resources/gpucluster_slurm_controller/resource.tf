# Slurm authenticates every message with MUNGE: the key on every node first (pitfall P10).
resource "gpucluster_munge_key" "cluster" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]
}

# The guide's controller: every setting defaults to the guide's value, so a
# real cluster needs nothing but the node and the MUNGE dependency.
resource "gpucluster_slurm_controller" "cluster" {
  node = "login01"

  # Anything else slurm.conf knows, by its Slurm name. Keys of the typed
  # attributes are refused, and so is AccountingStorageTRES=gres/gpu without
  # slurmdbd (pitfall P2): set that as gpucluster_slurm_accounting's tres.
  extra = {
    SlurmctldDebug = "info"
  }

  # munged must run with the cluster's key before slurmctld starts.
  depends_on = [gpucluster_munge_key.cluster]
}

# In containers, where Slurm's cgroup plugins cannot work (their cgroups are
# read-only), set instead:
#   proctrack_type       = "proctrack/linuxproc"
#   task_plugin          = "task/none"
#   job_acct_gather_type = "jobacct_gather/none"
