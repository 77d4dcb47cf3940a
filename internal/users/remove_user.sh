# shellcheck shell=sh disable=SC2154 # the caller sets name
getent passwd "$name" >/dev/null || exit 0
gid=$(getent group "$name" | cut -d: -f3)
userdel "$name"
if [ -n "$gid" ] && ! getent group "$name" >/dev/null; then groupadd -g "$gid" "$name"; fi
echo removed
