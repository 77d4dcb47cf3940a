# Takes one backup of the Slurm controller into "$dest/$name": StateSaveLocation ($state) as
# statesave.tar.gz and, when $db is set, the accounting database as "$db.sql.gz". Slurm's
# upgrade guide copies StateSaveLocation with slurmctld stopped, since slurmctld rewrites its
# files all the time: so slurmctld, if it runs, is stopped for the copy and the dump (which then
# match: no job can start or end between them) and started again however this script ends. The
# backup is written under a temporary name and renamed once whole, so a backup under its final
# name is complete. Only the temporary names this script makes are ever removed here.
# shellcheck shell=sh disable=SC2154 # the caller sets state, dest, name and db; accounting_dump.sh comes first
set -e
umask 077
[ -d "$state" ] || { echo "StateSaveLocation $state is not a directory" >&2; exit 1; }
mkdir -p -- "$dest"
[ ! -e "$dest/$name" ] || { echo "$dest/$name exists already" >&2; exit 1; }
for stale in "$dest"/.slurm-backup-*.partial; do
	[ ! -e "$stale" ] || rm -rf -- "$stale"
done
tmp="$dest/.$name.partial"
mkdir -- "$tmp"
trap 'rm -rf -- "$tmp"' EXIT
stopped=no
if systemctl is-active --quiet slurmctld; then
	trap 'rm -rf -- "$tmp"; systemctl start slurmctld' EXIT
	systemctl stop slurmctld
	stopped=yes
fi
tar -C "$state" -czf "$tmp/statesave.tar.gz" .
if [ -n "$db" ]; then
	dump_accounting "$tmp"
fi
trap 'rm -rf -- "$tmp"' EXIT
if [ "$stopped" = yes ]; then
	systemctl start slurmctld
fi
mv -T -- "$tmp" "$dest/$name"
trap - EXIT
