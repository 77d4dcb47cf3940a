## Accounting, when asked for: -var accounting=true -var slurmdbd_password=... --
#
# Off by default, so `make demo` stays the guide's cluster. On, MariaDB and
# slurmdbd come from the lab's local repository like the rest, and the one
# activation of the apply brings the accounting lines into slurm.conf.

variable "accounting" {
  description = "Set up Slurm accounting (MariaDB, slurmdbd, an account, a QOS, every cluster user in them)."
  type        = bool
  default     = false
}

variable "slurmdbd_password" {
  description = "Password of the MariaDB user slurmdbd connects as; needed with accounting. Ephemeral: never in state or plan."
  type        = string
  sensitive   = true
  ephemeral   = true
  default     = null
}

resource "gpucluster_slurm_accounting" "cluster" {
  count = var.accounting ? 1 : 0

  controller                   = gpucluster_slurm_controller.cluster.id
  database_password_wo         = var.slurmdbd_password
  database_password_wo_version = 1
  tres                         = ["gres/gpu"]
  enforce                      = ["associations", "limits", "qos"]
}

resource "gpucluster_slurm_account" "research" {
  count = var.accounting ? 1 : 0

  controller = gpucluster_slurm_accounting.cluster[0].id
  name       = "research"
}

# Two GPUs per user at a time: the demo's two one-GPU jobs still run side by side.
resource "gpucluster_slurm_qos" "gpu2" {
  count = var.accounting ? 1 : 0

  controller        = gpucluster_slurm_activation.cluster.id
  name              = "gpu2"
  max_tres_per_user = { "gres/gpu" = 2 }
}

resource "gpucluster_slurm_user" "cluster" {
  for_each = var.accounting ? gpucluster_user.cluster : {}

  controller      = gpucluster_slurm_accounting.cluster[0].id
  name            = each.value.name
  accounts        = [gpucluster_slurm_account.research[0].name]
  default_account = gpucluster_slurm_account.research[0].name
  qos             = [gpucluster_slurm_qos.gpu2[0].name]
  default_qos     = gpucluster_slurm_qos.gpu2[0].name
}

data "gpucluster_slurm_gpu_hours" "today" {
  count = var.accounting ? 1 : 0

  controller = gpucluster_slurm_accounting.cluster[0].id
  start      = "now-1days"

  depends_on = [gpucluster_slurm_user.cluster]
}

output "gpu_hours" {
  description = "GPU hours per user over the last day, from sacct (with accounting)."
  value       = var.accounting ? { for u in data.gpucluster_slurm_gpu_hours.today[0].users : u.user => u.gpu_hours } : null
}
