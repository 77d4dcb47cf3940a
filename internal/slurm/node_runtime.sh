# shellcheck shell=sh
runtime() { scontrol show node -o 2>&1; }
if systemctl is-active --quiet slurmctld; then sec runtime runtime; else secv runtime 1; fi
