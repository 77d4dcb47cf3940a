# shellcheck shell=sh
command -v munge >/dev/null || { echo "munge is not installed" >&2; exit 127; }
munge -n | unmunge >/dev/null
