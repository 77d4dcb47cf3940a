// Package munge keeps the MUNGE key of a cluster: one key, made once on the
// controller, identical on every node, readable by munged alone. The key is
// carried from host to host in memory and never written anywhere else: not to
// a local disk, a command line, a log or an error.
package munge
