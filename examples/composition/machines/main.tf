# A STAND-IN for the module that creates your machines: a cloud provider's instances
# (aws_instance, hcloud_server, openstack_compute_instance_v2) or a bare-metal provisioner
# (maas_instance, metal_device). Like those, it reports each machine's address and SSH host key
# only once the machine exists, so both are unknown when the first plan is made. It is built on
# Terraform's own terraform_data, so this example plans without any cloud account.
terraform {
  required_version = ">= 1.11"
}

variable "names" {
  description = "Host names of the machines to create."
  type        = list(string)
}

variable "subnet" {
  description = "Subnet the machines get their addresses from."
  type        = string
}

variable "host_keys" {
  description = "Each machine's ed25519 public host key (in a cloud: from cloud-init or the instance's console output)."
  type        = map(string)
}

resource "terraform_data" "machine" {
  for_each = toset(var.names)
  input    = each.key
}

output "hosts" {
  description = "Per host name: its address and its known_hosts key, known only after apply."
  value = {
    for i, name in var.names : name => {
      # Joining the machine's id makes the value unknown until the machine exists, as a real
      # provider's computed address is.
      address  = trimprefix("${terraform_data.machine[name].id}=${cidrhost(var.subnet, 10 + i)}", "${terraform_data.machine[name].id}=")
      host_key = trimprefix("${terraform_data.machine[name].id}=${var.host_keys[name]}", "${terraform_data.machine[name].id}=")
    }
  }
}
