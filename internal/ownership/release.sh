# Removes an ownership record only while it carries the caller's token; otherwise prints the
# record that names another instance. $f and $token are set before this text.
# shellcheck shell=sh disable=SC2154 # the caller sets f and token
if [ ! -e "$f" ]; then echo absent; exit 0; fi
if grep -qx "token=$token" "$f"; then rm -f -- "$f"; echo released; exit 0; fi
echo taken
cat -- "$f"

