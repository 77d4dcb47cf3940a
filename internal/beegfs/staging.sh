# shellcheck shell=sh disable=SC2154 # the caller sets mnt, rel, migrate, ownconf, cfg and inner
if [ "$migrate" = 1 ] && ! command -v rsync >/dev/null; then
	echo "rsync is not installed: install it to migrate $mnt" >&2; exit 1
fi
stage=$(mktemp -d /run/gpucluster-beegfs-staging.XXXXXX) || exit 1
trap 'rm -f "$stage/client.conf"; rmdir "$stage/beegfs" "$stage/local" "$stage" 2>/dev/null' EXIT
if [ "$ownconf" = 1 ]; then cat > "$stage/client.conf" && cfg=$stage/client.conf || exit 1; fi
mkdir "$stage/beegfs" "$stage/local" || exit 1
unshare --mount --propagation private /bin/sh -c "$inner" sh "$stage" "$cfg" "$mnt" "$rel" "$migrate"
