# shellcheck shell=sh
for unit in ssh sshd; do
	if systemctl is-active --quiet "$unit"; then systemctl reload "$unit"; exit $?; fi
done
