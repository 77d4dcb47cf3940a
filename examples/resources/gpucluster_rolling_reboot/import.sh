# NODE,NODE@CONTROLLER: the servers in the run's order and the controller. The
# next plan shows a run for every server whose record on the controller
# (/var/lib/gpucluster/rolling-reboot/NODE) is not for the configured trigger.
terraform import gpucluster_rolling_reboot.gpu_driver gpu01,gpu02,gpu03@login01
