# shellcheck shell=sh
err=$(mysql --batch 2>&1 >/dev/null) && exit 0
printf '%s\n' "$err" | sed -n 's/^\(ERROR [0-9]* ([A-Z0-9]*)\).*/MariaDB \1/p' | head -n 1 >&2
exit 1
