# shellcheck shell=sh
# The configuration files to remove are the arguments.
if command -v slurmctld >/dev/null; then systemctl disable --now --quiet slurmctld || exit; fi
rm -f -- "$@"
