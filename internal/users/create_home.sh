# shellcheck shell=sh disable=SC2154 # the caller sets home and owner
if [ -e "$home" ] || [ -L "$home" ]; then echo exists; exit 0; fi
mkdir -p -- "$(dirname -- "$home")"
mkdir -m 0700 -- "$home"
if [ -d /etc/skel ]; then cp -a /etc/skel/. "$home"/; fi
chown -R -- "$owner" "$home"
chmod 0700 -- "$home"
echo created
