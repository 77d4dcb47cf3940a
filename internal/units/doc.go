// Package units reads the state of systemd units and of their daemons' key files. The packages
// that own a daemon (munge, slurm, beegfs) share its units and files with Share, and every
// resource of a host reads them from one shared read (transport.Executor.Read), where each
// asking alone would cost the host a process and a D-Bus round trip through systemd.
package units
