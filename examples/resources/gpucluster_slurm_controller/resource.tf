# The guide's controller: every setting defaults to the guide's value, so a
# real cluster needs nothing but the node and the MUNGE dependency.
resource "gpucluster_slurm_controller" "cluster" {
  node = "login01"

  # Only for the lab: its containers cannot use Slurm's cgroup plugins (their
  # cgroups are read-only). Leave these three out on a real cluster.
  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = "task/none"
  job_acct_gather_type = "jobacct_gather/none"

  # Anything else slurm.conf knows, by its Slurm name. Keys of the typed
  # attributes are refused, and so is AccountingStorageTRES=gres/gpu without
  # slurmdbd (pitfall P2): set that as gpucluster_slurm_accounting's tres.
  extra = {
    SlurmctldDebug = "info"
  }

  # Slurm authenticates with MUNGE: munged must run with the cluster's key
  # before slurmctld starts (pitfall P10).
  depends_on = [gpucluster_munge_key.cluster]
}
