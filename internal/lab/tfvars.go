package lab

// TFVars are the lab's connection settings, GPU servers and subnet as variables of examples/cluster
// (what `gpucluster-lab tfvars` prints); examples/lab-cluster/lab.tfvars holds the rest of what
// the lab needs. They include the sudo password: write them where only root reads.
func (l *Lab) TFVars() map[string]any {
	gpus := []string{}
	for _, h := range l.HostsWithRole(RoleGPU) {
		gpus = append(gpus, h.Name)
	}
	return map[string]any{
		"ssh_private_key_file": l.AdminKeyPath,
		"known_hosts_file":     l.KnownHostsPath,
		"sudo_password":        l.AdminPassword,
		"login_address":        l.Host(LoginHost).Address,
		"gpu_servers":          gpus,
		"cluster_subnet":       l.Subnet,
	}
}
