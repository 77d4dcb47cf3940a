# Defines dump_accounting: it dumps the accounting database $db into "$1/$db.sql.gz" with
# MariaDB's own client, as root through the server's socket, so no password is needed.
# --single-transaction reads one consistent view while slurmdbd keeps writing.
# shellcheck shell=sh disable=SC2154 # the caller sets db
dump_accounting() {
	dump=$(command -v mariadb-dump || command -v mysqldump) || { echo "neither mariadb-dump nor mysqldump is installed" >&2; return 1; }
	"$dump" --single-transaction --databases "$db" --result-file="$1/$db.sql" || return
	gzip -- "$1/$db.sql"
}
