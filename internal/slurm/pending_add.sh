# shellcheck shell=sh disable=SC2154 # the caller sets f, dir and lock, and the nodes as "$@"
# shellcheck disable=SC2174 # -m is for the fragments' directory; its parent is Slurm's own
mkdir -p -m 0755 -- "$dir" || exit
exec 9>>"$lock" && flock 9 || exit
{ [ -e "$f" ] && cat -- "$f"; printf '%s\n' "$@"; } | sort -u > "$f.tmp" && mv -f -- "$f.tmp" "$f"
