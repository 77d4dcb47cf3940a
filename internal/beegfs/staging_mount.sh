# shellcheck shell=sh
stage=$1 cfg=$2 mnt=$3 rel=$4 migrate=$5
mount -t beegfs beegfs_nodev "$stage/beegfs" -o "cfgFile=$cfg" || { journalctl -k -n 40 --no-pager -o cat 2>/dev/null | grep -F 'beegfs: ' >&2; exit 1; }
if [ "$migrate" = 1 ]; then
	mount --bind "$mnt" "$stage/local" || exit 1
	rsync -aHAX --numeric-ids --ignore-existing "$stage/local/" "$stage/beegfs/" >&2 || exit 1
fi
i=0
for p in . .ssh .ssh/authorized_keys; do
	sec "b$i" stat -c "%u %a %F" -- "$stage/beegfs/$rel/$p" 2>/dev/null
	sec "l$i" stat -c "%u %a %F" -- "$mnt/$rel/$p" 2>/dev/null
	i=$((i + 1))
done
