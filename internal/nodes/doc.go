// Package nodes reads what a cluster node is (OS, CPU topology, memory, GPUs,
// time synchronisation), waits for a new machine's first boot to finish (WaitBooted), and
// manages the guide's per-node SSH restriction.
// It has no Terraform types.
package nodes
