# shellcheck shell=sh disable=SC2154 # the caller sets d
systemctl reset-failed "$d" 2>/dev/null
if ! systemctl restart "$d"; then
	journalctl -u "$d" -n 20 --no-pager -o cat >&2
	exit 1
fi
