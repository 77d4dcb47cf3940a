# Creates an ownership record only where none exists: link(2) fails on an existing name, so of
# two applies racing for one object exactly one wins, and the other reads the winner's record.
# A record with the caller's own token is replaced (a create finishing, or taking over an
# unfinished create by import). The record arrives on stdin; $f, $dir, $owners and $token
# are set, and transport.StateDirText has run, before this text.
# shellcheck shell=sh disable=SC2154 # the caller sets f, dir, owners and token
set -e
umask 022
mkdir -p "$dir"
chmod 0755 "$owners" "$dir"
tmp=$(mktemp "$dir/.claim.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cat > "$tmp"
chmod 0644 "$tmp"
if ln "$tmp" "$f" 2>/dev/null; then echo claimed; exit 0; fi
if [ -f "$f" ] && grep -qx "token=$token" "$f"; then mv -f "$tmp" "$f"; echo replaced; exit 0; fi
echo taken
cat -- "$f"

