#!/bin/sh
# Runs inside the freshly debootstrapped rootfs (chroot) once per image build,
# after fetch-repo.sh filled the local repository REPO and the Packages index
# was written next to its .debs. Usage: customize.sh REPO
# Everything host-specific (hostname, address, host keys, GPU stand-ins) is
# added per host at bring-up, so the image stays shareable between hosts.
set -eu
repo=$1

# Ubuntu 26.04 arrangement: sudo is sudo-rs, classic sudo stays reachable as sudo.ws.
dpkg-divert --local --rename --divert /usr/bin/sudo.ws --add /usr/bin/sudo
ln -s ../lib/cargo/bin/sudo /usr/bin/sudo

useradd --uid 1000 --user-group --groups sudo --shell /bin/bash --create-home admin
install -d -m 0700 -o admin -g admin /home/admin/.ssh

# Per-host keys are generated at bring-up; shared keys would make hosts indistinguishable.
rm -f /etc/ssh/ssh_host_*
cat > /etc/ssh/sshd_config.d/00-lab.conf <<'CONF'
PermitRootLogin no
PasswordAuthentication no
KbdInteractiveAuthentication no
CONF

# sshd runs as ssh.service; the socket variant would race it for port 22.
rm -rf /etc/systemd/system/ssh.socket.wants
# Timers only add noise and load inside short-lived lab hosts.
rm -f /etc/systemd/system/timers.target.wants/apt-daily.timer \
	/etc/systemd/system/timers.target.wants/apt-daily-upgrade.timer \
	/etc/systemd/system/timers.target.wants/dpkg-db-backup.timer \
	/etc/systemd/system/timers.target.wants/fstrim.timer \
	/etc/systemd/system/timers.target.wants/e2scrub_all.timer
# The console belongs to systemd-nspawn (read-only); a getty on it would spin.
rm -f /etc/systemd/system/getty.target.wants/getty@tty1.service
ln -sf /dev/null /etc/systemd/system/console-getty.service

systemctl enable systemd-networkd.service

# An empty machine-id makes systemd generate one per boot from --uuid.
: > /etc/machine-id
rm -f /var/lib/dbus/machine-id

# Lab hosts have no network: the local repository is their only source, and
# its lists are cached here so that `apt-get install` works without an update.
rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*
cat > /etc/apt/sources.list.d/lab.sources <<SOURCES
Types: deb
URIs: file:$repo
Suites: ./
Trusted: yes
SOURCES
apt-get clean
rm -rf /var/lib/apt/lists/*
apt-get update
