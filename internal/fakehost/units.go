package fakehost

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// unitDir is where packages install their unit files; a unit exists when its file is in one
// of the system manager's unit directories, as systemd sees it after a daemon-reload.
const unitDir = "/usr/lib/systemd/system"

var unitDirs = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", unitDir, "/lib/systemd/system"}

// Units are the runtime state of a host's systemd units: which are enabled and active, and how
// often each was started, so a test can tell that a no-op apply restarted nothing.
type Units struct {
	mu    sync.Mutex
	units map[string]*Unit
}

// Unit is one systemd unit's state.
type Unit struct {
	Enabled, Active bool
	// Starts counts the (re)starts of the unit, Reloads its reloads.
	Starts, Reloads int
	// start, when set, is what the daemon does as it starts: an error fails the start, as a
	// daemon that refuses its configuration fails it.
	start func() error
}

func newUnits() *Units { return &Units{units: map[string]*Unit{}} }

// Get returns a copy of a unit's runtime state.
func (u *Units) Get(name string) Unit {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s := u.units[unitName(name)]; s != nil {
		return *s
	}
	return Unit{}
}

// state returns the unit's runtime record, made on first use; the caller holds mu.
func (u *Units) state(name string) *Unit {
	s := u.units[name]
	if s == nil {
		s = &Unit{}
		u.units[name] = s
	}
	return s
}

// InstallUnit writes a unit file for name, as a package shipping it does, and sets what the
// daemon does when it starts (nil: nothing that can fail).
func (h *Host) InstallUnit(name string, start func() error) {
	name = unitName(name)
	must(h.FS.MkdirAll(unitDir, 0o755))
	must(h.FS.WriteFile(path.Join(unitDir, name), []byte("[Unit]\nDescription="+name+"\n"), 0o644))
	h.Units.mu.Lock()
	defer h.Units.mu.Unlock()
	h.Units.state(name).start = start
}

func (h *Host) unitExists(name string) bool {
	for _, d := range unitDirs {
		if _, err := h.FS.Stat(path.Join(d, name), false); err == nil {
			return true
		}
	}
	return false
}

func unitName(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	return name + ".service"
}

// systemctl models the verbs the provider uses.
func systemctl(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "q", "", map[string]byte{"--quiet": 'q', "--now": 'n', "--all": 'a',
		"--plain": 'p', "--no-legend": 'l', "--full": 'f', "--no-pager": 'g'})
	if !ok {
		return 127
	}
	if len(operands) == 0 {
		return c.NotModelled("systemctl without a verb")
	}
	verb, names := operands[0], operands[1:]
	for i, n := range names {
		names[i] = unitName(n)
	}
	u := c.Host.Units
	switch verb {
	case "daemon-reload", "reset-failed":
		return 0
	case "list-units":
		if !f.has('a') || !f.has('p') || !f.has('l') {
			return c.NotModelled("systemctl list-units without --all --plain --no-legend")
		}
		listUnits(c, names)
		return 0
	case "is-active", "is-enabled":
		return isState(c, verb, names, f.has('q'))
	}
	status := 0
	for _, n := range names {
		if !c.Host.unitExists(n) {
			return c.Errorf(5, "Failed to %s %s: Unit %s not found.", verb, n, n)
		}
		u.mu.Lock()
		s, known := unitVerb(c, verb, n, u.state(n), f.has('n'))
		u.mu.Unlock()
		if !known {
			return c.NotModelled("systemctl " + verb)
		}
		status = max(status, s)
	}
	return status
}

// listUnits prints the loaded ones among names: those enabled or active.
func listUnits(c *Call, names []string) {
	u := c.Host.Units
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, n := range names {
		s := u.units[n]
		if !c.Host.unitExists(n) || s == nil || (!s.Active && !s.Enabled) {
			continue
		}
		if s.Active {
			c.Printf("%s loaded active running %s\n", n, n)
		} else {
			c.Printf("%s loaded inactive dead %s\n", n, n)
		}
	}
}

// isState answers is-active and is-enabled: one word per unit, status 0 when any unit is.
func isState(c *Call, verb string, names []string, quiet bool) int {
	u := c.Host.Units
	u.mu.Lock()
	defer u.mu.Unlock()
	status := map[string]int{"is-active": 3, "is-enabled": 1}[verb]
	for _, n := range names {
		s := u.units[n]
		var word string
		yes := false
		switch {
		case verb == "is-active" && s != nil && s.Active:
			word, yes = "active", true
		case verb == "is-active":
			word = "inactive"
		case !c.Host.unitExists(n):
			word = "not-found"
			if !quiet {
				_, _ = fmt.Fprintf(c.Stderr, "Failed to get unit file state for %s: No such file or directory\n", n)
			}
			continue
		case s != nil && s.Enabled:
			word, yes = "enabled", true
		default:
			word = "disabled"
		}
		if yes {
			status = 0
		}
		if !quiet {
			c.Println(word)
		}
	}
	return status
}

// unitVerb changes one unit; the caller holds the units' lock.
func unitVerb(c *Call, verb, name string, unit *Unit, now bool) (status int, known bool) {
	start := func() int {
		if unit.start != nil {
			if err := unit.start(); err != nil {
				unit.Active = false
				return c.Errorf(1, "Job for %s failed because the control process exited with error code.", name)
			}
		}
		unit.Active = true
		unit.Starts++
		return 0
	}
	switch verb {
	case "start":
		if !unit.Active {
			return start(), true
		}
	case "restart":
		return start(), true
	case "try-restart":
		if unit.Active {
			return start(), true
		}
	case "reload-or-restart":
		if !unit.Active {
			return start(), true
		}
	case "reload":
		if !unit.Active {
			return c.Errorf(1, "%s is not active, cannot reload.", name), true
		}
		unit.Reloads++
	case "stop":
		unit.Active = false
	case "enable":
		unit.Enabled = true
		if now && !unit.Active {
			return start(), true
		}
	case "disable":
		unit.Enabled = false
		if now {
			unit.Active = false
		}
	default:
		return 0, false
	}
	return 0, true
}
