// Package fakehost is a machine for tests that need no lab: an in-process SSH server
// (golang.org/x/crypto/ssh) in front of a Host with an in-memory filesystem, the account files
// and tools, systemd units, and sudo starting the provider's root shell, whose protocol the
// server speaks itself. Each script the provider sends runs in a POSIX shell interpreter
// (mvdan.cc/sh) whose commands are the fake's own, written against those files: what the
// provider's scripts use and nothing more. Anything else, a command, an option, a Perl or awk
// program, fails with "fakehost: ... not modelled" and is recorded on the Host (Unmodelled),
// so a test never passes by accident. Only tests import it; internal/provider's newFakeCluster
// points the provider at a set of them.
//
// What it models:
//   - SSH: key login as the admin, host keys for known_hosts, direct-tcpip to other loopback
//     ports (a jump host), sessions as the admin with SSH_CONNECTION, and sudo -n or -S with a
//     password, which starts only the provider's root shell.
//   - Files: directories, files, hard and symbolic links, modes, owners; cat, cp, mv, rm, ln,
//     mkdir, install, mktemp, chmod, chown, stat -c, sha256sum, cmp, grep, cut, sed -n s///p,
//     head, tr, wc, sort, base64 -w0, and locks on descriptors (always free: one script runs at
//     a time).
//   - Accounts in /etc/passwd and /etc/group: getent, id, useradd, usermod, userdel, groupadd,
//     groupmod, groupdel, with shadow-utils' exit statuses.
//   - Packages from a catalogue (apt-get install, apt-cache policy, dpkg-query), units
//     (systemctl start, restart, reload, enable, disable, is-active, is-enabled, list-units),
//     counting starts and reloads.
//   - MUNGE (a key made at install, munged reading it at start, credentials that decode once
//     per host with the same key), UFW through its files, Slurm's packages and scontrol's
//     ping, reconfigure, show node, update (drain, resume) and show hostnames, which checks
//     slurm.conf's syntax only.
//   - A Debian 13 machine's facts (os-release, /proc, lscpu, slurmd -C, the kernel clock's
//     Perl program), sshd -t, and ip -o addr show.
//
// What a test adds with Handle: canned replies for tools it does not model, nvidia-smi for one.
package fakehost
