# shellcheck shell=sh
run() { name=$1; shift; out='' rc=127; if command -v "$1" >/dev/null 2>&1; then out=$("$@"); rc=$?; fi; secv "$name" $rc "$out"; return $rc; }
runall() { name=$1; shift; out='' rc=127; if command -v "$1" >/dev/null 2>&1; then out=$("$@" 2>&1); rc=$?; fi; secv "$name" $rc "$out"; return $rc; }
readf() { c=; while IFS= read -r line; do c="$c$line
"; done < "$1" || return; c="$c$line"; }
secf() { k=$1; shift; rc=1; for f; do readf "$f" 2>/dev/null; rc=$?; [ $rc -ne 0 ] || break; done; secv "$k" $rc "$c"; }
hardware() { run lscpu lscpu; secf meminfo /proc/meminfo; }
