# shellcheck shell=sh disable=SC2154 # the caller sets n, the node, f, its fragment, and marker
scontrol show node -o "$n" || exit
! grep -qs '^DrainReason=' -- "$f" || echo "$marker"
