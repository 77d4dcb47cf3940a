package units

import "github.com/gpucluster/terraform-provider-gpucluster/internal/transport"

// EnableText is shell text that enables unit at boot unless systemd has it enabled already, and
// fails as systemctl enable fails. On Debian, systemctl enable of a unit that also ships a SysV
// init script (munge, slurmd, slurmctld, mariadb) runs update-rc.d and reloads systemd even when
// the unit is enabled, on the critical path of a first apply, whose packages enabled those units
// when they were installed; is-enabled only reads. Only "enabled" is left alone: every other
// word (enabled-runtime, linked, static, generated, disabled, masked) still goes to systemctl
// enable, as before.
func EnableText(unit string) string {
	u := transport.Quote(unit)
	return `[ "$(systemctl is-enabled ` + u + ` 2>/dev/null)" = enabled ] || systemctl enable --quiet ` + u
}
