package lab

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// EnvRelease selects the Debian release a lab's image is built from, and with
// it the Slurm generation the hosts install: trixie (the default) ships Slurm
// 24.11, forky its successor. An instance started with one release keeps it
// (the descriptor records it), so two instances can run different releases
// side by side.
const EnvRelease = "GPUCLUSTER_LAB_RELEASE"

// DefaultRelease is the release of a lab started without EnvRelease.
const DefaultRelease = "trixie"

// Releases are the Debian releases the lab can build an image from.
var Releases = []string{DefaultRelease, "forky"}

// releaseAptConf is apt configuration a release's image needs while it still
// fetches from the mirror. Testing's Release file expires after a week
// (Valid-Until), and a mirror that lags behind, or a machine whose clock runs
// ahead, would make every build fail; the signature is still checked.
var releaseAptConf = map[string]string{
	"forky": "Acquire::Check-Valid-Until \"false\";\n",
}

// releaseNspawnEnv is the environment systemd-nspawn needs to boot a
// release's hosts. systemd 258 and later (forky's) refuse to run on the
// cgroup v1 hierarchy this machine's nspawn gives containers by default, so
// they get the unified (v2) one, whose controllers all stay with v1 on a
// hybrid machine: Slurm in the lab runs without cgroup plugins either way.
var releaseNspawnEnv = map[string][]string{
	"forky": {"SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1"},
}

// aptConfPath is where releaseAptConf is written inside the image.
const aptConfPath = "etc/apt/apt.conf.d/90gpucluster-lab"

// debootstrapScript names the debootstrap script a release uses when the
// machine's debootstrap predates it: Debian 12's debootstrap has no forky
// script, and every Debian release since jessie uses the sid script.
const debootstrapScript = "/usr/share/debootstrap/scripts/sid"

// NewRelease validates a release name; "" is the default release.
func NewRelease(name string) (string, error) {
	if name == "" {
		return DefaultRelease, nil
	}
	if !slices.Contains(Releases, name) {
		return "", fmt.Errorf("invalid %s %q: want one of %s", EnvRelease, name, strings.Join(Releases, ", "))
	}
	return name, nil
}

// ReleaseFromEnv returns the release named by GPUCLUSTER_LAB_RELEASE.
func ReleaseFromEnv() (string, error) {
	return NewRelease(os.Getenv(EnvRelease))
}
