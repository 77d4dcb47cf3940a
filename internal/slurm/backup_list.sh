# Lists the backups in $dest, oldest first, one "backup NAME" line each, after removing those
# beyond the newest $keep ("removed NAME"); $keep empty removes none. Only names of the form
# slurm-backup-TIMESTAMP count, so nothing else in $dest is ever listed or removed. A missing
# $dest holds no backup.
set -e
[ -d "$dest" ] || exit 0
names=$(ls -1 -- "$dest" | grep -E '^slurm-backup-[0-9]{8}T[0-9]{6}Z$' | LC_ALL=C sort) || true
if [ -n "$keep" ] && [ -n "$names" ]; then
	old=$(printf '%s\n' "$names" | head -n "-$keep")
	for n in $old; do
		rm -rf -- "${dest:?}/$n"
		echo "removed $n"
	done
	names=$(printf '%s\n' "$names" | tail -n "$keep")
fi
for n in $names; do
	echo "backup $n"
done
