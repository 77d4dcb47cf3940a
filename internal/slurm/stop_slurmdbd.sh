# shellcheck shell=sh disable=SC2154 # the caller sets conf, slurmdbd.conf's path
if command -v slurmdbd >/dev/null; then
	systemctl disable --now --quiet slurmdbd || exit
	if systemctl is-failed --quiet slurmdbd; then systemctl reset-failed slurmdbd || exit; fi
fi
rm -f -- "$conf"
