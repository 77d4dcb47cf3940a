// Package fakehost is a machine for tests that need no lab: an in-process SSH server
// (golang.org/x/crypto/ssh) in front of a Host with an in-memory filesystem, the account files
// and tools, systemd units, and sudo starting the provider's root shell, whose protocol the
// server speaks itself. Each script the provider sends runs in a POSIX shell interpreter
// (mvdan.cc/sh) whose commands are the fake's own, written against those files: what the
// provider's scripts use and nothing more. Anything else, a command, an option, a program in a
// Perl one-liner, fails with "fakehost: ... not modelled" and is recorded on the Host, so a
// test never passes by accident. Only tests import it.
package fakehost
