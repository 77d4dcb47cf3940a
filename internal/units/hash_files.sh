# shellcheck shell=sh
hashfiles() {
	for f; do shift; if [ -e "$f" ]; then set -- "$@" "$f"; fi; done
	[ $# -eq 0 ] || { sha256sum -- "$@" && stat -c '%a %U %G %n' -- "$@"; }
}
