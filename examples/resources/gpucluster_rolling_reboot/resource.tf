# The guide's driver update: change the version, apply, and the GPU servers are
# rebooted one at a time. Each is drained, its jobs finish (for up to
# drain_timeout; the apply refuses rather than end one), it reboots, and it is
# resumed once it answers over SSH and slurmd registers with the same hardware.
# The plan's plan_order shows the order. In a configuration that also builds
# the cluster, refer to gpucluster_slurm_controller.NAME.slurmctld_host and add
# depends_on = [the servers' gpucluster_slurm_compute], so that a first apply
# builds the servers before it reboots them.
resource "gpucluster_rolling_reboot" "gpu_driver" {
  controller      = "login01"
  nodes           = ["gpu01", "gpu02", "gpu03"]
  trigger         = "nvidia-driver-550.54.15"
  max_unavailable = 1
  drain_timeout   = "4h"
  boot_timeout    = "15m"
}
