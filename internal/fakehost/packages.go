package fakehost

import (
	"slices"
	"sort"
	"strings"
)

// Package is one Debian package the host's apt can install: its version, and what installing
// it does (files, accounts, units, as its maintainer scripts would).
type Package struct {
	Version string
	Install func(h *Host)
}

// AddPackage makes a package available to apt-get on the host.
func (h *Host) AddPackage(name string, p Package) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.available[name] = p
}

// Installed returns the installed version of a package, "" when it is not installed.
func (h *Host) Installed(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.installed[name]
}

// InstallPackage installs an available package as apt-get would, for a test to set a host up.
func (h *Host) InstallPackage(name string) bool {
	h.mu.Lock()
	p, ok := h.available[name]
	if ok {
		h.installed[name] = p.Version
	}
	h.mu.Unlock()
	if ok && p.Install != nil {
		p.Install(h)
	}
	return ok
}

// dpkgQuery models `dpkg-query -W -f FORMAT -- NAMES` with the fields ${Package},
// ${db:Status-Abbrev} and ${Version}.
func dpkgQuery(c *Call) int {
	f, names, ok := parseFlags(c, c.Args[1:], "W", "f", map[string]byte{"--show": 'W', "--showformat": 'f'})
	if !ok {
		return 127
	}
	if !f.has('W') || !f.has('f') {
		return c.NotModelled("dpkg-query without -W -f")
	}
	format := strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(f['f'])
	status := 0
	for _, n := range names {
		c.Host.mu.Lock()
		_, known := c.Host.available[n]
		version, installed := c.Host.installed[n]
		c.Host.mu.Unlock()
		if !known && !installed {
			_, _ = c.Stderr.Write([]byte("dpkg-query: no packages found matching " + n + "\n"))
			status = 1
			continue
		}
		abbrev := "un "
		if installed {
			abbrev = "ii "
		} else {
			version = ""
		}
		line := strings.NewReplacer("${Package}", n, "${db:Status-Abbrev}", abbrev, "${Version}", version).Replace(format)
		if strings.Contains(line, "${") {
			return c.NotModelled("dpkg-query field in " + f['f'])
		}
		c.Printf("%s", line)
	}
	return status
}

// aptGet models `apt-get update` and `apt-get install -y ... NAMES` (options -q, -o and
// --no-install-recommends are accepted and change nothing here).
func aptGet(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "yqr", "o", map[string]byte{"--no-install-recommends": 'r', "--yes": 'y', "--quiet": 'q'})
	if !ok {
		return 127
	}
	if len(operands) == 0 {
		return c.NotModelled("apt-get without a command")
	}
	switch operands[0] {
	case "update":
		return 0
	case "install":
	default:
		return c.NotModelled("apt-get " + operands[0])
	}
	if !f.has('y') {
		return c.NotModelled("apt-get install without -y")
	}
	names := operands[1:]
	c.Host.mu.Lock()
	for _, n := range names {
		if _, ok := c.Host.available[n]; !ok {
			c.Host.mu.Unlock()
			return c.Errorf(100, "E: Unable to locate package %s", n)
		}
	}
	c.Host.mu.Unlock()
	sort.Strings(names)
	for _, n := range slices.Compact(names) {
		if c.Host.Installed(n) == "" {
			c.Host.InstallPackage(n)
		}
	}
	return 0
}

// aptCache models `apt-cache policy NAMES`: the installed and candidate versions.
func aptCache(c *Call) int {
	if len(c.Args) < 3 || c.Args[1] != "policy" {
		return c.NotModelled("apt-cache other than policy")
	}
	for _, n := range c.Args[2:] {
		c.Host.mu.Lock()
		p, known := c.Host.available[n]
		installed := c.Host.installed[n]
		c.Host.mu.Unlock()
		if !known {
			continue
		}
		if installed == "" {
			installed = "(none)"
		}
		c.Printf("%s:\n  Installed: %s\n  Candidate: %s\n  Version table:\n     %s 500\n        500 http://deb.debian.org/debian trixie/main amd64 Packages\n",
			n, installed, p.Version, p.Version)
	}
	return 0
}
