# shellcheck shell=sh
fingerprint() { [ -e "$1" ] || return 3; sha256sum < "$1" && stat -c '%U:%G %a' -- "$1"; }
mountof() {
	p=$1
	while [ ! -e "$p" ]; do p=${p%/*}; p=${p:-/}; done
	printf 'path=%s\n' "$p"
	findmnt -n -P -o TARGET,SOURCE,FSTYPE,UUID --target "$p"
}
iddir() {
	[ -d "$2" ] || { secv "$1" 3; return; }
	use=empty
	for e in "$2"/* "$2"/.[!.]* "$2"/..?*; do
		if [ -e "$e" ] || [ -L "$e" ]; then use=used; break; fi
	done
	secv "$1" 0 "$use"
}
requiredmounts() {
	k=$1 d=$2
	set --
	for f in "$d"/*.conf; do
		case ${f##*/} in target-[0-9]*.conf) continue ;; esac
		[ ! -f "$f" ] || set -- "$@" "$f"
	done
	if [ $# -eq 0 ]; then secv "$k" 0; else sec "$k" sed -n 's/^[[:space:]]*RequiresMountsFor[[:space:]]*=[[:space:]]*/=/p' -- "$@"; fi
}
