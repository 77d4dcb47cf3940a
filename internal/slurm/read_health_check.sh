# shellcheck shell=sh disable=SC2154 # the caller sets p
[ -f "$p" ] || exit 0
sha256sum -- "$p" | cut -d' ' -f1
stat -c '%U:%G:%a' -- "$p"
