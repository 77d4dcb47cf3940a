# The guide's verification: munge -n | unmunge on every node, scontrol ping, and
# sinfo -a. In the configuration that builds the cluster, add
# depends_on = [gpucluster_slurm_compute.gpu] (your compute nodes) so it reads
# after they are up.
data "gpucluster_cluster_check" "guide" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]
}

output "cluster_ok" {
  value = data.gpucluster_cluster_check.guide.ok
}

output "cluster_problems" {
  value = data.gpucluster_cluster_check.guide.problems
}
