# Every setting of the example. Only the connection settings differ from one site to the next;
# the rest defaults to the guide's values, and the test lab changes a few of them
# (examples/lab-cluster/lab.tfvars says which, and why).

## Connection ----------------------------------------------------------------------

variable "ssh_private_key_file" {
  description = "Private key of the admin account, the same on every node."
  type        = string
  default     = "~/.ssh/id_ed25519"
}

variable "known_hosts_file" {
  description = "known_hosts with the host key of login01 (under its name and login_address) and of every GPU server (under the name login01 resolves). A node whose key is not there is refused."
  type        = string
  default     = "~/.ssh/known_hosts"
}

# Ephemeral as well as sensitive: Terraform writes the value of every other variable into a saved
# plan (terraform plan -out). An ephemeral value reaches the provider's configuration and is kept
# in neither the state nor a plan file; `terraform apply PLANFILE` asks for it again.
variable "sudo_password" {
  description = "sudo password of the admin account. Unset (null), the provider reads GPUCLUSTER_SUDO_PASSWORD from the environment. Ephemeral: never in the state or a saved plan."
  type        = string
  sensitive   = true
  ephemeral   = true
  default     = null
}

variable "sudo_exe" {
  description = "sudo the provider runs on the nodes. Ubuntu 26.04 ships sudo-rs as sudo; the guide uses the classic implementation, installed as /usr/bin/sudo.ws."
  type        = string
  default     = "/usr/bin/sudo.ws"

  validation {
    condition     = can(regex("^(/[^[:space:]]+|[A-Za-z0-9._-]+)$", var.sudo_exe))
    error_message = "sudo_exe must be an absolute path or a command name, without spaces."
  }
}

variable "login_address" {
  description = "Address of login01 as seen from where Terraform runs and from the GPU servers (the guide's firewall_login_ip): the SSH address, BeeGFS's management host and the source of the GPU servers' SSH rule."
  type        = string
  default     = "10.0.0.10"

  validation {
    condition     = can(cidrhost("${var.login_address}/32", 0))
    error_message = "login_address must be an IPv4 address, such as 10.0.0.10: the firewall admits SSH to the GPU servers from it."
  }
}

## Nodes -----------------------------------------------------------------------------

variable "gpu_servers" {
  description = "Names of the GPU servers, as login01 resolves them. Each ends in its number, which is its BeeGFS storage node ID (gpu02: node 2, target 201). Adding a GPU server is adding its name here."
  type        = list(string)
  default     = ["gpu01", "gpu02", "gpu03"]

  validation {
    condition     = length(var.gpu_servers) > 0 && alltrue([for s in var.gpu_servers : can(regex("^[a-z][a-z0-9-]*[0-9]$", s)) && tonumber(regex("[0-9]+$", s)) > 0])
    error_message = "gpu_servers must list at least one host name of lower-case letters, digits and dashes that ends in a number above 0 (gpu01), its BeeGFS storage node ID."
  }
  validation {
    condition     = length(distinct(var.gpu_servers)) == length(var.gpu_servers) && !contains(var.gpu_servers, "login01")
    error_message = "gpu_servers must name each GPU server once, and not login01."
  }
  validation {
    condition     = length(distinct([for s in var.gpu_servers : tonumber(regex("[0-9]+$", s))])) == length(var.gpu_servers)
    error_message = "The numbers that end the names in gpu_servers must differ: each is a BeeGFS storage node ID."
  }
}

variable "compute_only_servers" {
  description = "GPU servers (also in gpu_servers) that hold no BeeGFS storage target: they run slurmd and the BeeGFS client, and get no BeeGFS storage port."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for s in var.compute_only_servers : contains(var.gpu_servers, s)])
    error_message = "Every server in compute_only_servers must also be in gpu_servers."
  }
}

variable "gpu_hardware" {
  description = <<-EOT
    Hardware of the GPU servers' NodeName line. Unset values default to what `slurmd -C`
    reports on each server (the guide's CPUs=384 Boards=1 SocketsPerBoard=2 CoresPerSocket=96
    ThreadsPerCore=2 RealMemory=500000 on its servers). Set real_memory only to round down:
    above what a node reports is refused at plan time, because Slurm would drain the node.
    gres is the guide's untyped gpu:4. gpu_files lists the GPUs' device files for GPUs NVML
    cannot see (the lab's stand-ins); unset, gres.conf is the guide's AutoDetect=nvml.
  EOT
  type = object({
    gres              = optional(string, "gpu:4")
    gpu_files         = optional(string)
    cpus              = optional(number)
    boards            = optional(number)
    sockets_per_board = optional(number)
    cores_per_socket  = optional(number)
    threads_per_core  = optional(number)
    real_memory       = optional(number)
  })
  default = {}

  validation {
    condition     = can(regex("^gpu(:[A-Za-z0-9_.-]+)?:[1-9][0-9]*$", var.gpu_hardware.gres))
    error_message = "gpu_hardware.gres must be gpu:COUNT or gpu:TYPE:COUNT, such as gpu:4."
  }
}

## Users -----------------------------------------------------------------------------

variable "cluster_users" {
  description = "Cluster users and their fixed UIDs (the guide's cluster_users), all in the group users (GID 100). Never reuse a UID: BeeGFS records ownership as numbers. The admin account (UID 1000) is not a cluster user."
  type        = map(number)
  default = {
    alice = 1001
    bob   = 1002
  }

  validation {
    condition     = alltrue([for name, uid in var.cluster_users : can(regex("^[a-z_][a-z0-9_-]{0,31}$", name)) && uid > 1000 && uid < 60000 && floor(uid) == uid])
    error_message = "cluster_users maps user names (lower-case, up to 32 characters) to whole UIDs from 1001 to 59999; 1000 is the admin account's."
  }
  validation {
    condition     = length(distinct(values(var.cluster_users))) == length(var.cluster_users)
    error_message = "Each user in cluster_users needs a UID of its own."
  }
}

## Slurm -----------------------------------------------------------------------------

variable "slurm_plugins" {
  description = <<-EOT
    How slurmd confines and measures jobs: ProctrackType, TaskPlugin, JobAcctGatherType in
    slurm.conf and CgroupPlugin in cgroup.conf. The defaults are the guide's, all cgroup-based,
    which cgroup.conf's ConstrainCores and ConstrainDevices need. Only hosts that cannot delegate
    cgroups to slurmd (containers such as the test lab's) need proctrack/linuxproc, task/none,
    jobacct_gather/none and CgroupPlugin=disabled.
  EOT
  type = object({
    proctrack_type       = optional(string, "proctrack/cgroup")
    task_plugin          = optional(string, "task/cgroup,task/affinity")
    job_acct_gather_type = optional(string, "jobacct_gather/cgroup")
    cgroup_plugin        = optional(string, "autodetect")
  })
  default = {}

  validation {
    condition = alltrue([
      can(regex("^proctrack/[a-z_]+$", var.slurm_plugins.proctrack_type)),
      can(regex("^task/[a-z_]+(,task/[a-z_]+)*$", var.slurm_plugins.task_plugin)),
      can(regex("^jobacct_gather/[a-z_]+$", var.slurm_plugins.job_acct_gather_type)),
      can(regex("^[a-z0-9/_]+$", var.slurm_plugins.cgroup_plugin)),
    ])
    error_message = "slurm_plugins takes Slurm plugin names: proctrack/NAME, task/NAME[,task/NAME], jobacct_gather/NAME, and a CgroupPlugin such as autodetect or disabled."
  }
}

variable "def_mem_per_gpu" {
  description = "The partition's DefMemPerGPU in megabytes: what a job that omits --mem gets per GPU instead of the whole node (pitfall P4). Defaults to the guide's 120000. null gives each GPU an equal share of the smallest GPU server's RealMemory, for servers with less memory than the guide's (the lab)."
  type        = number
  default     = 120000

  validation {
    condition     = var.def_mem_per_gpu == null || try(var.def_mem_per_gpu >= 1 && floor(var.def_mem_per_gpu) == var.def_mem_per_gpu, false)
    error_message = "def_mem_per_gpu must be a whole number of megabytes, at least 1, or null."
  }
}

## Accounting ------------------------------------------------------------------------

variable "accounting" {
  description = "Set up Slurm accounting: MariaDB and slurmdbd on login01, per-user GPU hours, an account and a QOS of two GPUs per user with every cluster user in them (accounting.tf). Off by default, as the guide says (\"Do Not Enable GPU Accounting Yet\"); turning it on restarts slurmctld once."
  type        = bool
  default     = false
}

variable "slurmdbd_password" {
  description = "Password of the MariaDB user slurmdbd connects as (12 to 128 characters); needed only with accounting = true. Ephemeral: never in the state or a saved plan."
  type        = string
  sensitive   = true
  ephemeral   = true
  default     = null

  validation {
    condition     = !var.accounting || var.slurmdbd_password != null
    error_message = "accounting = true needs slurmdbd_password (for example TF_VAR_slurmdbd_password in the environment)."
  }
}

## Firewall and BeeGFS ---------------------------------------------------------------

variable "cluster_subnet" {
  description = "The cluster's subnet, the source of every cluster rule (the guide's firewall_subnet)."
  type        = string
  default     = "10.0.0.0/24"

  validation {
    condition     = can(cidrnetmask(var.cluster_subnet))
    error_message = "cluster_subnet must be an IPv4 network in CIDR notation, such as 10.0.0.0/24."
  }
}

variable "home_fstype" {
  description = "The filesystem type findmnt shows on /home once the BeeGFS client mounted it: beegfs. The test lab's BeeGFS stand-in mounts tmpfs."
  type        = string
  default     = "beegfs"

  validation {
    condition     = can(regex("^[a-z0-9_.]+$", var.home_fstype))
    error_message = "home_fstype must be a filesystem type as findmnt prints it, such as beegfs."
  }
}
