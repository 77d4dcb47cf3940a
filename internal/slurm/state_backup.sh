# shellcheck shell=sh disable=SC2154 # the caller sets d, b and p
[ -d "$d" ] || { echo "$d is not a directory" >&2; exit 1; }
umask 077
install -d -m 0700 -- "$b" || exit
f="$b/$p$(date -u +%Y%m%dT%H%M%S.%NZ).tar.gz"
tar -C "$d" -czf "$f.partial" . || { rm -f -- "$f.partial"; exit 1; }
mv -- "$f.partial" "$f" && echo "$f"
