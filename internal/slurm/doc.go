// Package slurm knows Slurm's configuration files on the controller: the
// model of slurm.conf, cgroup.conf and gres.conf with the guide's values as
// defaults, their rendering, the fragments each resource keeps on the
// controller, how a change reaches the daemons, and the guide's pitfalls.
// It also knows Slurm accounting: MariaDB and slurmdbd.conf on the
// accounting node, and the associations (accounts, users, QOS) and job
// records in slurmdbd, reached through sacctmgr and sacct. It has no
// Terraform types.
package slurm
