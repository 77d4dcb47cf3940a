# At most one GPU per user at a time: a second concurrent one-GPU job pends
# with the reason QOSMaxGRESPerUser. In a whole configuration, controller is
# gpucluster_slurm_activation.NAME.id: slurmdbd knows the gres/gpu TRES only
# after slurmctld ran with tres = ["gres/gpu"].
resource "gpucluster_slurm_qos" "gpu1" {
  controller        = "login01"
  name              = "gpu1"
  description       = "one gpu per user"
  priority          = 10
  max_tres_per_user = { "gres/gpu" = 1 }
}
