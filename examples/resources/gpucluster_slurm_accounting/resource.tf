# The database password: write-only, so from an ephemeral variable (or an
# ephemeral resource) it never reaches the state, the plan or a saved plan file.
variable "slurmdbd_password" {
  description = "Password of the MariaDB user slurmdbd connects as."
  type        = string
  sensitive   = true
  ephemeral   = true
}

# MariaDB and slurmdbd on the controller, then the accounting lines in
# slurm.conf, in the guide's order. In a whole configuration, controller is
# gpucluster_slurm_controller.NAME.id, and gpucluster_slurm_activation depends
# on this resource, so the one activation of the apply brings the accounting
# lines in.
resource "gpucluster_slurm_accounting" "cluster" {
  controller                   = "login01"
  database_password_wo         = var.slurmdbd_password
  database_password_wo_version = 1

  # GPU hours per user: allowed here (pitfall P2), since slurmdbd runs first.
  tres = ["gres/gpu"]

  # QOS limits such as one GPU per user apply only when enforced.
  enforce = ["associations", "limits", "qos"]
}
