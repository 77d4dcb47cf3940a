// Package packages installs Debian packages on a host with apt, only the ones
// that are missing, so an apply on a host that has everything runs no apt at all.
package packages
