// Package lab describes and drives the local test lab: systemd-nspawn
// containers that stand in for a GPU cluster (see cmd/gpucluster-lab).
//
// Tests only need Require, Host and Exec; they run against a lab that
// `make lab-up` (gpucluster-lab up) started beforehand.
//
// The hosts run a stand-in for ThinkParQ's BeeGFS (image/beegfs-standin,
// its FIDELITY.md says what it models). Like a site with a BeeGFS license,
// the login host gets a license certificate at bring-up, in the stand-in's
// own format at the real default path (StandInLicensePath): the guide's
// `beegfs health check` fails without one, and installing it is the site's
// job, not the provider's.
package lab
