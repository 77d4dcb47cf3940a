variable "ssh_private_key_file" {
  description = "Private key of the admin account."
  type        = string
  default     = "~/.ssh/id_ed25519"
}

variable "known_hosts_file" {
  description = "known_hosts with the host key of login01 and of every GPU server."
  type        = string
  default     = "~/.ssh/known_hosts"
}

variable "login_address" {
  description = "Address of login01 (the guide's firewall_login_ip)."
  type        = string
  default     = "10.0.0.10"
}

variable "gpu_servers" {
  description = "Names of the GPU servers, as login01 resolves them. Adding a GPU server is adding its name here."
  type        = list(string)
  default     = ["gpu01", "gpu02", "gpu03"]
}

variable "gpu_hardware" {
  description = <<-EOT
    Hardware of the GPU servers' NodeName line. Unset values default to what `slurmd -C`
    reports on each server (the guide's CPUs=384 Boards=1 SocketsPerBoard=2 CoresPerSocket=96
    ThreadsPerCore=2 RealMemory=500000 on its servers). Set real_memory only to round down:
    above what a node reports is refused at plan time, because Slurm would drain the node.
  EOT
  type = object({
    gres              = optional(string, "gpu:4")
    cpus              = optional(number)
    boards            = optional(number)
    sockets_per_board = optional(number)
    cores_per_socket  = optional(number)
    threads_per_core  = optional(number)
    real_memory       = optional(number)
  })
  default = {}
}
