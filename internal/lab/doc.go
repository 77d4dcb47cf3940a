// Package lab describes and drives the local test lab: systemd-nspawn
// containers that stand in for a GPU cluster (see cmd/gpucluster-lab).
//
// Tests only need Require, Host and Exec; they run against a lab that
// `make lab-up` (gpucluster-lab up) started beforehand.
package lab
