# shellcheck shell=sh disable=SC2154 # the caller sets client and conf
"$client" rebuild >&2 || exit
ko=/lib/modules/$(uname -r)/updates/fs/beegfs_autobuild/beegfs.ko
[ -e "$ko" ] || { echo "$client rebuild built no $ko: is buildEnabled=true in $conf?" >&2; exit 1; }
