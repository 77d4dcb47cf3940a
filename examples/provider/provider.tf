terraform {
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = "~> 0.1"
    }
  }
}

# Every node is reached as admin over SSH, through login01 as jump host, with host keys
# checked against known_hosts. The sudo password comes from GPUCLUSTER_SUDO_PASSWORD; the
# other connection settings may come from the environment too (GPUCLUSTER_ and the name in capitals).
provider "gpucluster" {
  user             = "admin"
  private_key_file = "~/.ssh/id_ed25519"
  known_hosts_file = "~/.ssh/known_hosts"
  login_node       = "login01"

  # Off by default. When set, a node seen for the first time has its key recorded in
  # known_hosts_file (OpenSSH's accept-new); a key that changes later is still refused.
  # accept_new_host_keys = true

  # Ubuntu 26.04 ships sudo-rs as sudo; the classic implementation works the same way.
  sudo_exe = "/usr/bin/sudo.ws"

  # A node that is not reached through the login node.
  node {
    name      = "gpu09"
    address   = "192.0.2.19"
    jump_host = ""
  }

  # A server that is down: nothing connects to it, its resources keep their
  # state, and the rest of the cluster plans and applies.
  node {
    name    = "gpu04"
    offline = true
  }
}
