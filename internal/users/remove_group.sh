# shellcheck shell=sh disable=SC2154 # the caller sets name
getent group "$name" >/dev/null || exit 0
groupdel "$name"
echo removed
