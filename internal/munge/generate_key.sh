# shellcheck shell=sh disable=SC2154 # the caller sets dir, the key's directory
set -e
umask 077
t=$(mktemp -- "$dir/.munge.key.gpucluster-new.XXXXXX")
trap 'rm -f -- "$t"' EXIT
mungekey --create --force --keyfile "$t"
cat -- "$t"
