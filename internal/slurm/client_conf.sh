# shellcheck shell=sh disable=SC2154 # the caller sets conf, the client's slurm.conf
d=$(mktemp -d) || exit 1
trap 'rm -rf -- "$d"' EXIT
printf '%s' "$conf" > "$d/slurm.conf" || exit 1
export SLURM_CONF="$d/slurm.conf"
