# shellcheck shell=sh disable=SC2154 # the caller sets name, list, query and not_installed
created() { if [ -e "$list" ]; then grep -cxF -- "$name" "$list"; else echo 0; fi; return 0; }
sec created created
hosts() { mysql -N -B -e "$query" 2>&1; }
if command -v mysql >/dev/null; then sec hosts hosts; else secv hosts "$not_installed"; fi
