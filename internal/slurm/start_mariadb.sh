# shellcheck shell=sh disable=SC2154 # the caller sets restart, 1 when MariaDB's settings changed
if [ "$restart" = 1 ]; then
	systemctl restart mariadb || exit
else
	systemctl is-active --quiet mariadb || systemctl start mariadb || exit
fi
