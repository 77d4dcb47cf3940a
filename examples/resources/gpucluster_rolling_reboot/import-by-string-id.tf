import {
  to = gpucluster_rolling_reboot.gpu_driver
  id = "gpu01,gpu02,gpu03@login01"
}
