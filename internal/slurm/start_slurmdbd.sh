# shellcheck shell=sh disable=SC2154 # the caller sets changed, 1 when slurmdbd.conf changed
verb=restart
if [ "$changed" != 1 ]; then
	systemctl is-active --quiet slurmdbd && exit 0
	verb=start
fi
systemctl reset-failed slurmdbd 2>/dev/null; systemctl "$verb" slurmdbd || { journalctl -u slurmdbd -n 15 --no-pager -o cat >&2; exit 1; }
echo 'done'
