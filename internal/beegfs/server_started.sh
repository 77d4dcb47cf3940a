# Confirms that a BeeGFS metadata or storage daemon systemctl has just
# started stayed up and registered with the management service. The units
# are Type=simple, so systemctl returns before the daemon's checks: only the
# daemon's own lines of this run (its main PID) tell. Set by the caller:
# unit, deadline (seconds), registered (the daemon's line on registration).
# Exit 0: registered. Exit 10: the daemon ended; 11: the deadline passed.
# Either way the daemon's lines of this run follow "state=<ActiveState>".
# shellcheck shell=sh disable=SC2154 # the caller sets unit, deadline and registered
pid=$(systemctl show -p ExecMainPID --value "$unit")
lines() { journalctl -q -o cat --no-pager "_SYSTEMD_UNIT=$unit" "_PID=$pid"; }
report() {
	echo "state=$(systemctl show -p ActiveState --value "$unit")"
	lines
	exit "$1"
}
end=$(($(date +%s) + deadline))
while :; do
	case $(systemctl show -p ActiveState --value "$unit") in
	active | activating | reloading) ;;
	*)
		# journald may still be reading the daemon's last words.
		i=0
		while [ "$i" -lt 20 ] && ! lines | grep -q -e '^Error: ' -e '^Unrecoverable error: '; do
			sleep 0.1
			i=$((i + 1))
		done
		report 10
		;;
	esac
	if lines | grep -qF -- "$registered"; then
		exit 0
	fi
	[ "$(date +%s)" -lt "$end" ] || report 11
	sleep 0.2
done
