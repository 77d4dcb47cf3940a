# The node. Destroy after an import restores the state found at import.
terraform import gpucluster_firewall.gpu01 gpu01
