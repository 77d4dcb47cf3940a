package fakehost

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"path"
	"strings"
)

// The machine a fake host is: Debian 13 on x86_64, with the CPU topology and memory below
// (lscpu and /proc/meminfo), sshd running, and a kernel clock in sync.
const (
	OSVersionID    = "13"
	KernelRelease  = "6.12.48+deb13-amd64"
	CPUs           = 8
	MemTotalKiB    = 16331260
	ClockMaxErrorU = 2000 // the kernel clock's maximum error, in microseconds
)

func seedSystem(h *Host) {
	must(h.FS.MkdirAll("/proc/sys/kernel", 0o555))
	must(h.FS.WriteFile("/proc/sys/kernel/osrelease", []byte(KernelRelease+"\n"), 0o444))
	must(h.FS.WriteFile("/proc/sys/kernel/hostname", []byte(h.Name+"\n"), 0o444))
	must(h.FS.WriteFile("/proc/sys/kernel/arch", []byte("x86_64\n"), 0o444))
	must(h.FS.WriteFile("/proc/meminfo", []byte("MemTotal:       16331260 kB\nMemFree:        12000000 kB\n"), 0o444))
	must(h.FS.WriteFile("/etc/os-release", []byte(`PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
ID=debian
`), 0o644))
	must(h.FS.MkdirAll("/etc/ssh/sshd_config.d", 0o755))
	must(h.FS.WriteFile("/etc/ssh/sshd_config", []byte("Include /etc/ssh/sshd_config.d/*.conf\nKbdInteractiveAuthentication no\nUsePAM yes\n"), 0o644))
	must(h.FS.WriteFile("/usr/sbin/sshd", []byte("#!fakehost\n"), 0o755))
	must(h.FS.WriteFile("/usr/bin/perl", []byte("#!fakehost\n"), 0o755))
	h.InstallUnit("ssh.service", nil)
	h.Units.mu.Lock()
	u := h.Units.state("ssh.service")
	u.Enabled, u.Active, u.Starts = true, true, 1
	h.Units.mu.Unlock()
}

func systemCommands() map[string]Command {
	return map[string]Command{"lscpu": lscpu, "base64": base64Cmd, "sshd": sshd, "perl": perl}
}

// lscpu prints the topology fields the provider reads, as util-linux does with LC_ALL=C.
func lscpu(c *Call) int {
	if len(c.Args) > 1 {
		return c.NotModelled("lscpu options")
	}
	c.Printf("Architecture:             x86_64\nCPU(s):                   %d\nModel name:               Fake CPU\n"+
		"Thread(s) per core:       2\nCore(s) per socket:       %d\nSocket(s):                1\n", CPUs, CPUs/2)
	return 0
}

// base64Cmd models `base64 -w0 [--] [FILE]`.
func base64Cmd(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "", "w", nil)
	if !ok {
		return 127
	}
	if f['w'] != "0" || len(operands) > 1 {
		return c.NotModelled("this form of base64")
	}
	return inputs(c, operands, func(_ string, data []byte) int {
		c.Printf("%s", base64.StdEncoding.EncodeToString(data))
		return 0
	})
}

// sshd models `sshd -t`: each line of the drop-ins must be a keyword sshd knows, as far as the
// provider writes them.
func sshd(c *Call) int {
	if len(c.Args) != 2 || c.Args[1] != "-t" {
		return c.NotModelled("sshd other than -t")
	}
	infos, _ := c.Host.FS.ReadDir("/etc/ssh/sshd_config.d")
	for _, fi := range infos {
		data, err := c.Host.FS.ReadFile("/etc/ssh/sshd_config.d/" + fi.Name())
		if err != nil {
			return errStatus(c, err)
		}
		for i, l := range lines(data) {
			f := strings.Fields(l)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			if !strings.EqualFold(f[0], "AllowGroups") || len(f) < 2 {
				return c.Errorf(255, "/etc/ssh/sshd_config.d/%s: line %d: Bad configuration option: %s", fi.Name(), i+1, f[0])
			}
		}
	}
	return 0
}

// perlPrograms are the Perl programs the provider's scripts send, each known by a line only it
// has, and what the fake answers for it.
var perlPrograms = []struct {
	signature string
	run       func(c *Call, args []string) int
}{
	{"syscall($nr, $timex)", func(c *Call, _ []string) int { c.Printf("maxerror=%d\n", ClockMaxErrorU); return 0 }},
	{`sec("fragment $name", hexof($f));`, perlFragments},
}

// perlFragments prints each file given that exists as the section "fragment NAME", its content
// hex-encoded; a pattern the shell left unexpanded names no file and is skipped.
func perlFragments(c *Call, args []string) int {
	for _, a := range args {
		data, err := c.Host.FS.ReadFile(c.Path(a))
		if err != nil {
			continue
		}
		body := hex.EncodeToString(data)
		c.Printf("%s 0 %d fragment %s\n%s\n", sectionMark, len(body), path.Base(a), body)
	}
	return 0
}

// perl runs `perl -e PROGRAM [ARGS]` for the programs in perlPrograms; any other is not
// modelled.
func perl(c *Call) int {
	if len(c.Args) < 3 || c.Args[1] != "-e" {
		return c.NotModelled("perl without -e")
	}
	for _, p := range perlPrograms {
		if strings.Contains(c.Args[2], p.signature) {
			_, _ = io.Copy(io.Discard, c.Stdin)
			return p.run(c, c.Args[3:])
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(c.Args[2]), "\n")
	return c.NotModelled("perl program starting " + first)
}
