# shellcheck shell=sh disable=SC2154 # the caller sets name, list and header
if ! grep -qxF -- "$name" "$list" 2>/dev/null; then
	umask 022
	[ -e "$list" ] || printf '%s' "$header" > "$list" || exit
	printf '%s\n' "$name" >> "$list" || exit
fi
