# shellcheck shell=sh disable=SC2154 # the caller sets n, the node
systemctl is-active --quiet slurmctld || exit 0
scontrol show node -o "$n" >/dev/null 2>&1 || exit 0
squeue -h -w "$n" -t RUNNING,COMPLETING,CONFIGURING,SUSPENDED -o %i
