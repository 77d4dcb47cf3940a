# Prints how far the machine's boot got, one line per stage: cloud-init's status where
# cloud-init is installed, then systemd's system state. Neither needs root, and neither waits:
# the caller polls.
# shellcheck shell=sh
if command -v cloud-init >/dev/null 2>&1; then
	printf 'cloud-init %s\n' "$(cloud-init status 2>/dev/null | sed -n 's/^status: *//p')"
fi
printf 'systemd %s\n' "$(systemctl is-system-running 2>/dev/null)"
