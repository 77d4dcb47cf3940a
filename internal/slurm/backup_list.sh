# Lists the backups in $dest, oldest first, one "backup NAME" line each, after removing those
# beyond the newest $keep ("removed NAME"); $keep empty removes none. Only names of the form
# slurm-backup-TIMESTAMP count, so nothing else in $dest is ever listed or removed. A missing
# $dest holds no backup.
# shellcheck shell=sh disable=SC2154 # the caller sets dest and keep
set -e
[ -d "$dest" ] || exit 0
names=$(for p in "$dest"/slurm-backup-*; do
	case ${p##*/} in
	slurm-backup-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z) printf '%s\n' "${p##*/}" ;;
	esac
done | LC_ALL=C sort)
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
