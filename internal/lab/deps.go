package lab

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
)

// dependency is a machine command the lab needs and the Debian package providing it.
type dependency struct {
	Command string
	Package string
}

var dependencies = []dependency{
	{"debootstrap", "debootstrap"},
	{"systemd-nspawn", "systemd-container"},
	{"ip", "iproute2"},
	{"nsenter", "util-linux"},
	{"chroot", "coreutils"},
	{"ssh-keygen", "openssh-client"},
	{"ssh", "openssh-client"},
	{"dpkg-scanpackages", "dpkg-dev"},
	{"dpkg-deb", "dpkg"},
	{"mkfs.ext4", "e2fsprogs"},
	{"losetup", "mount"},
	// make demo reads its plan with jq (tools/demo-apply.sh).
	{"jq", "jq"},
	// make lint checks the programs the provider embeds (tools/lint-scripts.sh).
	{"shellcheck", "shellcheck"},
	{"mawk", "mawk"},
}

// MissingPackages lists the Debian packages whose commands are not on PATH.
func MissingPackages() []string {
	var missing []string
	for _, d := range dependencies {
		if _, err := exec.LookPath(d.Command); err != nil && !slices.Contains(missing, d.Package) {
			missing = append(missing, d.Package)
		}
	}
	return missing
}

// InstallDependencies installs missing packages with apt-get (CI starts from a fresh machine).
func InstallDependencies(ctx context.Context, log io.Writer) error {
	missing := MissingPackages()
	if len(missing) == 0 {
		return nil
	}
	logf(log, "installing %v\n", missing)
	if err := run(ctx, log, nil, "apt-get", "update"); err != nil {
		return err
	}
	args := append([]string{"install", "-y", "--no-install-recommends"}, missing...)
	return run(ctx, log, nil, "env", append([]string{"DEBIAN_FRONTEND=noninteractive", "apt-get"}, args...)...)
}

func requireDependencies() error {
	if missing := MissingPackages(); len(missing) > 0 {
		return fmt.Errorf("missing packages %v: run `gpucluster-lab deps --install`", missing)
	}
	return nil
}
