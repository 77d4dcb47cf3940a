# shellcheck shell=sh
secv() { set -- "$1" "$2" "${3-}"; printf '@@gpucluster %d %d %s\n%s\n' "$2" ${#3} "$1" "$3"; }
sec() { _k=$1; shift; _o=$("$@"); secv "$_k" $? "$_o"; }
