// Command gpucluster-lab builds, starts and stops the local test lab.
//
//	gpucluster-lab deps [--install]     list (or install) missing machine packages
//	gpucluster-lab image                build the cached Debian image (once per recipe and release)
//	gpucluster-lab up [--gpus N]        start login01 + gpu01..gpuNN (default 2)
//	gpucluster-lab add gpuNN            add one GPU server to the running lab
//	gpucluster-lab remove gpuNN         stop one GPU server and remove everything it left
//	gpucluster-lab reboot HOST          reboot HOST and wait until SSH answers again
//	gpucluster-lab stop gpuNN           power a GPU server off, keeping its disk and state
//	gpucluster-lab start gpuNN          power it on again and wait until SSH answers
//	gpucluster-lab disk-detach HOST     take HOST's disk (/data, /beegfs) away from its next boot on
//	gpucluster-lab disk-attach HOST     give HOST its disk back (mounted at its next boot)
//	gpucluster-lab disk HOST            print HOST's disk: mountpoint, filesystem UUID, loop device
//	gpucluster-lab exec HOST -- CMD...  run CMD as root inside HOST
//	gpucluster-lab status               print the descriptor path and hosts
//	gpucluster-lab hosts                print the host names, one per line
//	gpucluster-lab tfvars               print the lab's settings as a Terraform -var-file (JSON)
//	gpucluster-lab down                 stop the lab and remove everything it created
//
// GPUCLUSTER_LAB_INSTANCE=NAME selects a second lab that runs beside the
// default one (netns gpucluster-lab-NAME, descriptor
// /run/gpucluster-lab-NAME/lab.json); GPUCLUSTER_LAB overrides the descriptor path.
// GPUCLUSTER_LAB_RELEASE=forky builds and starts hosts of Debian forky (its
// newer Slurm) instead of trixie; a lab keeps the release it was started with.
package main
