# shellcheck shell=sh
printf '%s\n' "${SSH_CONNECTION:-}"
ip -o addr show 2>/dev/null
printf 'slurmd %s %s\n' "$(systemctl is-enabled slurmd 2>/dev/null)" "$(systemctl is-active slurmd 2>/dev/null)"
