# shellcheck shell=sh
pingctld() { scontrol ping 2>&1; }
nodes() { sinfo -a -h -N -o '%N %T' 2>&1; }
sec ping pingctld
sec nodes nodes
