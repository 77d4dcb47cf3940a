# shellcheck shell=sh disable=SC2154 # the caller sets f, the path of the secret
set -e
[ -e "$f" ] && { echo exists; exit 0; }
umask 077
t=$(mktemp "$f.gpucluster.XXXXXX")
trap 'rm -f -- "$t"' EXIT
dd if=/dev/urandom of="$t" bs=128 count=1 status=none
[ "$(stat -c %s "$t")" -eq 128 ]
chown root:root "$t"
chmod 0400 "$t"
if ln -- "$t" "$f" 2>/dev/null; then echo created; else echo exists; fi
