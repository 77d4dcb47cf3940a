// Package units reads the state of the systemd units the provider manages, and of their
// daemons' key files, for every resource of a host from one shared read: a no-op plan asked
// systemctl about munge, slurmd and the BeeGFS services eight times per GPU server, each
// invocation a process and a D-Bus round trip through systemd, where two serve them all.
package units
