# shellcheck shell=sh disable=SC2154 # the caller sets conf, slurmdbd.conf's path
[ -e "$conf" ] || exit 0
echo found
grep -v -i '^[[:space:]]*StoragePass' -- "$conf"
