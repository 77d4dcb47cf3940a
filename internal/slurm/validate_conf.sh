# shellcheck shell=sh
command -v scontrol >/dev/null || { echo "scontrol not found: install slurm-client" >&2; exit 127; }
d=$(mktemp -d) || exit 1
trap 'rm -rf -- "$d"' EXIT
cat > "$d/slurm.conf" || exit 1
SLURM_CONF="$d/slurm.conf" scontrol show hostnames localhost >/dev/null
