# shellcheck shell=sh disable=SC2154 # the caller sets p, the program's path
[ -e "$p" ] || exit 0
rm -f -- "$p" && echo removed
