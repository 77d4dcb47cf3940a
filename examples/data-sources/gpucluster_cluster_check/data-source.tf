# The guide's verification, read after the cluster is built.
data "gpucluster_cluster_check" "guide" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]

  depends_on = [gpucluster_slurm_compute.gpu]
}

output "cluster_ok" {
  value = data.gpucluster_cluster_check.guide.ok
}

output "cluster_problems" {
  value = data.gpucluster_cluster_check.guide.problems
}
