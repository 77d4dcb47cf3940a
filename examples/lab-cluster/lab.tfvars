# examples/cluster on the test lab: what the lab's hosts need that real servers do not. Everything
# else is the example's defaults, the guide's values. `make demo` applies examples/cluster with
# this file and with what `gpucluster-lab tfvars` prints: the lab's connection settings (admin's
# key, known_hosts, sudo password, login01's address) and its GPU servers.

# The lab's hosts are containers whose cgroups are read-only to slurmd, so Slurm tracks and
# confines jobs without cgroups; Slurm 26.05's slurmd (the forky lab's) also refuses to start
# beside the mix of cgroup v1 and v2 the containers see unless cgroup.conf disables the plugin.
slurm_plugins = {
  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = "task/none"
  job_acct_gather_type = "jobacct_gather/none"
  cgroup_plugin        = "disabled"
}

# The stand-in GPUs are device files NVML cannot see: gres.conf names them instead of
# AutoDetect=nvml. The rest of the hardware is what each container's slurmd -C reports.
gpu_hardware = {
  gpu_files = "/dev/nvidia[0-3]"
}

# The guide's 120000 MB per GPU is more than a lab host has: an equal share of the smallest GPU
# server's memory per GPU keeps the guide's point, four one-GPU jobs fit on a node.
def_mem_per_gpu = null

# The lab's BeeGFS stand-in mounts a lab-wide shared tmpfs over /home where BeeGFS mounts beegfs.
home_fstype = "tmpfs"
