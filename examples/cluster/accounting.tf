## Accounting, when asked for: job history, fair-share and GPU hours per user -----
#
# Off unless accounting = true, as the guide says ("Do Not Enable GPU Accounting Yet"). The guide
# stops at "deploy MariaDB and slurmdbd first, then set
# AccountingStorageType=accounting_storage/slurmdbd, and only then add the TRES list".
# gpucluster_slurm_accounting does it in that order, and the activation brings the accounting
# lines into slurm.conf with its one restart of slurmctld. Turn it on with
#   TF_VAR_slurmdbd_password=... terraform apply -var accounting=true
# and keep it set on every later plan: without it, the plan removes accounting again.

resource "gpucluster_slurm_accounting" "cluster" {
  count = var.accounting ? 1 : 0

  controller                   = gpucluster_slurm_controller.cluster.id
  database_password_wo         = var.slurmdbd_password
  database_password_wo_version = 1

  # GPU hours per user, and QOS limits that apply.
  tres    = ["gres/gpu"]
  enforce = ["associations", "limits", "qos"]
}

resource "gpucluster_slurm_account" "research" {
  count = var.accounting ? 1 : 0

  controller = gpucluster_slurm_accounting.cluster[0].id
  name       = "research"
  fairshare  = 1
}

# At most two GPUs per user at a time; a third concurrent one-GPU job pends
# with the reason QOSMaxGRESPerUser. Slurm knows the gres/gpu TRES once
# slurmctld ran with it: hence the activation's id as controller.
resource "gpucluster_slurm_qos" "gpu2" {
  count = var.accounting ? 1 : 0

  controller        = gpucluster_slurm_activation.cluster.id
  name              = "gpu2"
  max_tres_per_user = { "gres/gpu" = 2 }
}

# With associations enforced, only users with an association run jobs.
resource "gpucluster_slurm_user" "cluster" {
  for_each = var.accounting ? gpucluster_user.cluster : {}

  controller      = gpucluster_slurm_accounting.cluster[0].id
  name            = each.value.name
  accounts        = [gpucluster_slurm_account.research[0].name]
  default_account = gpucluster_slurm_account.research[0].name
  qos             = [gpucluster_slurm_qos.gpu2[0].name]
  default_qos     = gpucluster_slurm_qos.gpu2[0].name
}

data "gpucluster_slurm_gpu_hours" "last_30_days" {
  count = var.accounting ? 1 : 0

  controller = gpucluster_slurm_accounting.cluster[0].id
  start      = "now-30days"

  depends_on = [gpucluster_slurm_user.cluster]
}

output "gpu_hours" {
  description = "GPU hours per user over the last 30 days, from sacct; null without accounting."
  value       = var.accounting ? { for u in data.gpucluster_slurm_gpu_hours.last_30_days[0].users : u.user => u.gpu_hours } : null
}
