# A Slurm account under root with its fair-share. In a whole configuration,
# controller is gpucluster_slurm_accounting.NAME.id, so slurmdbd is set up first.
resource "gpucluster_slurm_account" "research" {
  controller  = "login01"
  name        = "research"
  fairshare   = 10
  description = "gpu research"
}
