# shellcheck shell=sh disable=SC2154 # the caller sets restart
if [ "$restart" = 1 ] || ! systemctl is-active --quiet slurmd; then
	if ! systemctl restart slurmd; then
		journalctl -u slurmd -n 20 --no-pager -o cat >&2
		exit 1
	fi
	echo started
fi
