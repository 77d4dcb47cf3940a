# STAND-IN for ThinkParQ's BeeGFS, used only by the gpucluster test lab:
# functions shared by the stand-in tools, copied into each of them where it
# says "#@common" when the lab builds the stand-in packages (build-debs.sh).
# shellcheck shell=sh

# die prints an error the way the real tools do and exits 1.
die() {
	echo "ERROR: $*" >&2
	exit 1
}

# conf_get FILE KEY prints KEY's value from a "key = value" file, blanks trimmed.
conf_get() {
	sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*//p" "$1" | sed 's/[[:space:]]*$//' | tail -n 1
}

# conf_set FILE KEY VALUE edits KEY's line in place, keeping its alignment, as
# ThinkParQ's setup scripts do with sed; a missing key is appended.
conf_set() {
	if grep -q "^[[:space:]]*$2[[:space:]]*=" "$1"; then
		sed -i "s|^\([[:space:]]*$2[[:space:]]*=\).*|\1 $3|; s|^\([[:space:]]*$2[[:space:]]*=\) $|\1|" "$1"
	else
		echo "$2 = $3" >> "$1"
	fi
}

is_true() {
	case $1 in
	true | yes | 1) return 0 ;;
	*) return 1 ;;
	esac
}

# fs_uuid DIR prints the UUID of the filesystem holding DIR (empty for none).
fs_uuid() {
	findmnt -n -o UUID --target "$1" 2>/dev/null | sed 's/[[:space:]]*$//'
}

# check_auth CFG refuses to go on without the shared secret, as 7.4+ does.
check_auth() {
	if is_true "$(conf_get "$1" connDisableAuthentication)"; then
		return 0
	fi
	auth=$(conf_get "$1" connAuthFile)
	[ -n "$auth" ] || die "connAuthFile is not set in $1 and connDisableAuthentication is false."
	[ -r "$auth" ] || die "Unable to read connAuthFile $auth: No such file or directory."
}

# cfg_arg ARGS... prints the value of a cfgFile=FILE argument, else $DEFAULT_CFG.
cfg_arg() {
	cfg=$DEFAULT_CFG
	for arg; do
		case $arg in cfgFile=*) cfg=${arg#cfgFile=} ;; esac
	done
	echo "$cfg"
}

# serve reports the daemon running and idles until stopped (SIGTERM). Under
# systemd (Type=notify) it says so first, so that `systemctl start` itself
# fails when a start-up check refuses, instead of racing the check.
serve() {
	echo "$*"
	if [ -n "${NOTIFY_SOCKET:-}" ]; then
		exec systemd-notify --ready --exec \; sleep infinity
	fi
	exec sleep infinity
}
