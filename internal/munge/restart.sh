# shellcheck shell=sh disable=SC2154 # the caller sets unit
if ! systemctl restart "$unit"; then
	journalctl -u "$unit" -n 10 --no-pager -o cat >&2
	exit 1
fi
