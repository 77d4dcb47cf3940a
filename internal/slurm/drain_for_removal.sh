# shellcheck shell=sh disable=SC2154 # the caller sets n, the node, and reason
systemctl is-active --quiet slurmctld || exit 0
line=$(scontrol show node -o "$n" 2>/dev/null) || exit 0
case "$line" in *' State='*DRAIN*) ;; *) scontrol update nodename="$n" state=drain reason="$reason" || exit; echo drained ;; esac
