# shellcheck shell=sh disable=SC2154 # the caller sets kernel_clock and allow_groups
secf os-release /etc/os-release /usr/lib/os-release
secf kernel /proc/sys/kernel/osrelease
secf hostname /proc/sys/kernel/hostname
run slurmd-C slurmd -C 2>/dev/null || { hardware; }
run slurmd-V slurmd -V 2>/dev/null
runall nvidia-smi nvidia-smi -L
clock=$(perl -e "$kernel_clock"); rc=$?; secv kernel-clock $rc "$clock"
[ "$rc" -eq 0 ] || runall timedatectl timedatectl show -p NTP -p NTPSynchronized
runall chronyc chronyc -n tracking
test -e /run/systemd/timesync/synchronized; secv timesyncd $?
if [ -e "$allow_groups" ]; then secf allow-groups "$allow_groups"; else secv allow-groups 127; fi
