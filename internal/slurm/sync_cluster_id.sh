# shellcheck shell=sh disable=SC2154 # the caller sets p, the saved ClusterID's file, and id, slurmdbd's
[ -e "$p" ] || exit 0
[ "$(cut -d'|' -f2 -- "$p")" = "$id" ] && exit 0
rm -f -- "$p" && echo removed
