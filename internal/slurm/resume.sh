# shellcheck shell=sh disable=SC2154 # the caller sets n, the node, and kept
out=$(scontrol update nodename="$n" state=undrain 2>&1) ||
  if scontrol show node -o "$n" | grep -q ' State=[^ ]*DRAIN'; then echo "$out" >&2; exit 1; fi
line=$(scontrol show node -o "$n") || exit 0
case "$line" in *' Reason='*) ;; *) exit 0 ;; esac
case "$line" in *' State='*DRAIN*|*' State='*FAIL*|*' State='*DOWN*) exit 0 ;; *' State=IDLE'*|*' State=MIXED'*) ;; *) exit 0 ;; esac
part=$(printf '%s\n' "$line" | sed -n 's/.* Partitions=\([^ ,]*\).*/\1/p')
[ -n "$part" ] || { echo "$kept"; exit 0; }
id=$(cd / && salloc -p "$part" -w "$n" -N1 -n1 -t 1 --immediate=20 --no-shell -J gpucluster-clear-reason 2>&1 |
  sed -n 's/^salloc: Granted job allocation \([0-9][0-9]*\)$/\1/p')
[ -n "$id" ] || { echo "$kept"; exit 0; }
scancel "$id"
