# A node is imported by its name. The address comes from the provider's node block of that
# name, or is the name itself.
terraform import gpucluster_node.gpu01 gpu01
