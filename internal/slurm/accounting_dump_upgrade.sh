# Dumps the accounting database $db into one new file in $b before slurmdbd's package changes,
# with dump_accounting (accounting_dump.sh, which comes first). The file appears under its
# name only once complete, readable by root alone, and its path is the only output.
# shellcheck shell=sh disable=SC2154 # the caller sets db, b and p
set -e
umask 077
install -d -m 0700 -- "$b"
tmp=$(mktemp -d -- "$b/.$p$db.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
dump_accounting "$tmp"
f="$b/$p$db-$(date -u +%Y%m%dT%H%M%S.%NZ).sql.gz"
mv -- "$tmp/$db.sql.gz" "$f"
echo "$f"
