# shellcheck shell=sh disable=SC2154 # the caller sets the paths v4, v6, conf, defaults, ledger and managed, and sections_awk
command -v ufw >/dev/null || { echo "ufw is not installed (Debian package ufw)" >&2; exit 3; }
set --
for kf in "v4=$v4" "v6=$v6" "conf=$conf" "defaults=$defaults" "ledger=$ledger"; do
	k=${kf%%=*} f=${kf#*=}
	if [ ! -e "$f" ]; then secv "$k" 0
	elif [ -f "$f" ] && [ -s "$f" ]; then set -- "$@" "k=$k" "$f"
	else sec "$k" cat -- "$f"; fi
done
[ $# -eq 0 ] || awk "$sections_awk" "$@" || secv awk $?
test -e "$managed"; secv managed $?
