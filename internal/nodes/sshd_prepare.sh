# shellcheck shell=sh disable=SC2154 # the caller sets user and p
sec id id -nG -- "$user"
if [ -f "$p" ]; then sec previous base64 -w0 -- "$p"; else secv previous 1; fi
