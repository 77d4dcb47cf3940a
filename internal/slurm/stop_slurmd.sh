# shellcheck shell=sh disable=SC2154 # the caller sets p, the health check program's path
rm -f -- "$p" || exit
command -v slurmd >/dev/null || exit 0
systemctl disable --now --quiet slurmd
