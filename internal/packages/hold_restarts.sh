# shellcheck shell=sh disable=SC2154 # the caller sets p, policy-rc.d's path, and marker
if [ -e "$p" ] && grep -qxF "$marker" "$p"; then rm -f -- "$p"; fi
if [ ! -e "$p" ]; then
	printf '#!/bin/sh\n%s\nexit 101\n' "$marker" > "$p" && chmod 0755 "$p" || exit
	trap 'rm -f -- "$p"' EXIT
fi
