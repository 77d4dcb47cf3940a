# shellcheck shell=sh disable=SC2154 # the caller sets conf, owner, conf_sum, db_conf, db_sum, db_user and db
# shellcheck disable=SC2016 # dpkg-query's own format, not the shell's
sec installed dpkg-query -W -f '${db:Status-Abbrev}\n' slurmdbd mariadb-server 2>/dev/null
if [ -e "$conf" ]; then
	if [ "$(stat -c '%U:%G %a' -- "$conf")" = "$owner" ] && [ "$(grep -v '^StoragePass=' -- "$conf" | sha256sum | cut -d' ' -f1)" = "$conf_sum" ]; then secv conf 0 matches; else secv conf 0 differs; fi
else secv conf 0 missing; fi
f=$(mktemp) || exit 1
trap 'rm -f -- "$f"' EXIT
{ echo '[client]'; sed -n 's/^StoragePass=/password=/p' -- "$conf" 2>/dev/null; } > "$f"
mysql --defaults-extra-file="$f" -u "$db_user" -N -e 'SELECT 1' "$db" >/dev/null 2>&1; secv login $?
[ "$(sha256sum < "$db_conf" 2>/dev/null | cut -d' ' -f1)" = "$db_sum" ]; secv mariadbconf $?
systemctl is-active --quiet mariadb; secv mariadb $?
systemctl is-active --quiet slurmdbd; secv slurmdbd $?
