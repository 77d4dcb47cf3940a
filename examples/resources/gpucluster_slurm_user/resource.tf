# alice charges her jobs to research, and they run in the QOS gpu1 unless she
# asks for another. In a whole configuration, name is gpucluster_user.NAME.name
# and the lists refer to gpucluster_slurm_account and gpucluster_slurm_qos.
resource "gpucluster_slurm_user" "alice" {
  controller      = "login01"
  name            = "alice"
  accounts        = ["research"]
  default_account = "research"
  qos             = ["gpu1", "normal"]
  default_qos     = "gpu1"
}
