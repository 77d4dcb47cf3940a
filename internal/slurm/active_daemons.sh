# shellcheck shell=sh
for d do
	if systemctl is-active --quiet "$d"; then echo "$d"; fi
done
