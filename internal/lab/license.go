package lab

import (
	"fmt"
	"time"
)

// StandInLicensePath is where the lab puts the BeeGFS stand-in's license
// certificate on the login host: the real management service's default
// license-cert-file. Real BeeGFS 8.4's `beegfs health check` fails without a
// valid license, and a license is the site's to install, not the
// provider's, so the lab plays the site. The format is the stand-in's own
// (image/beegfs-standin/standin/mgmtd_license.go), not ThinkParQ's signed
// certificate.
const StandInLicensePath = "/etc/beegfs/license.pem"

// standInLicenseValidity keeps the license far from the real tools'
// ninety-day expiry warning for the lab's whole life.
const standInLicenseValidity = 10 * 365 * 24 * time.Hour

func standInLicense(now time.Time) string {
	return fmt.Sprintf("# STAND-IN BeeGFS license certificate (gpucluster lab only)\nvalid-until = %s\ntype = standard\n",
		now.Add(standInLicenseValidity).UTC().Format(time.RFC3339))
}
