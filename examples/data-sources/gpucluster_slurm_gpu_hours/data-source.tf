# GPU hours per user over the last 7 days, from sacct.
data "gpucluster_slurm_gpu_hours" "week" {
  controller = "login01"
  start      = "now-7days"
}

output "gpu_hours_per_user" {
  value = { for u in data.gpucluster_slurm_gpu_hours.week.users : u.user => u.gpu_hours }
}
