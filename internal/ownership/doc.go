// Package ownership keeps, on the hosts, which resource instance owns each object the provider
// writes (an account, a Slurm partition, a node's firewall, a BeeGFS service), so that a second
// declaration of the same object is refused wherever it comes from: the same configuration,
// another working directory, or an import. A record is written before a create's first change
// and names the owner's token, which only that resource instance holds in its private state; only
// a destroy that holds the token removes it.
package ownership
