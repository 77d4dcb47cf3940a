package fakehost

import (
	"strings"
	"sync"
)

// Units are a host's systemd units: which are installed, enabled and active, and how often
// each was started or restarted, so a test can tell that a no-op apply restarted nothing.
type Units struct {
	mu    sync.Mutex
	units map[string]*Unit
}

// Unit is one systemd unit's state.
type Unit struct {
	Enabled, Active bool
	// Starts counts start and restart requests that (re)started the unit.
	Starts int
}

func newUnits() *Units { return &Units{units: map[string]*Unit{}} }

// Install makes a unit known, stopped and disabled, as a package that ships it does.
func (u *Units) Install(name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.units[unitName(name)] == nil {
		u.units[unitName(name)] = &Unit{}
	}
}

// Get returns a copy of a unit's state.
func (u *Units) Get(name string) (Unit, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.units[unitName(name)]
	if !ok {
		return Unit{}, false
	}
	return *s, true
}

func unitName(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	return name + ".service"
}

// systemctl models the verbs the provider uses on units the host has.
func systemctl(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "q", "", map[string]byte{"--quiet": 'q', "--now": 'n', "--no-block": 'b'})
	if !ok {
		return 127
	}
	if len(operands) == 0 {
		return c.NotModelled("systemctl without a verb")
	}
	verb, names := operands[0], operands[1:]
	if verb == "daemon-reload" {
		return 0
	}
	u := c.Host.Units
	u.mu.Lock()
	defer u.mu.Unlock()
	status := 0
	for _, n := range names {
		unit := u.units[unitName(n)]
		if unit == nil {
			if verb == "is-active" || verb == "is-enabled" {
				if !f.has('q') {
					c.Println(map[string]string{"is-active": "inactive", "is-enabled": "not-found"}[verb])
				}
				status = max(status, map[string]int{"is-active": 3, "is-enabled": 4}[verb])
				continue
			}
			return c.Errorf(5, "Failed to %s %s: Unit %s not found.", verb, unitName(n), unitName(n))
		}
		s, known := unitVerb(c, verb, unit, f.has('n'), f.has('q'))
		if !known {
			return c.NotModelled("systemctl " + verb)
		}
		status = max(status, s)
	}
	return status
}

func unitVerb(c *Call, verb string, unit *Unit, now, quiet bool) (status int, known bool) {
	say := func(s string) {
		if !quiet {
			c.Println(s)
		}
	}
	switch verb {
	case "is-active":
		say(map[bool]string{true: "active", false: "inactive"}[unit.Active])
		return map[bool]int{true: 0, false: 3}[unit.Active], true
	case "is-enabled":
		say(map[bool]string{true: "enabled", false: "disabled"}[unit.Enabled])
		return map[bool]int{true: 0, false: 1}[unit.Enabled], true
	case "start":
		if !unit.Active {
			unit.Active = true
			unit.Starts++
		}
	case "restart":
		unit.Active = true
		unit.Starts++
	case "try-restart":
		if unit.Active {
			unit.Starts++
		}
	case "reload", "reload-or-restart":
		if !unit.Active && verb == "reload" {
			return c.Errorf(1, "Job for unit failed because the unit is not active."), true
		}
		unit.Active = true
	case "stop":
		unit.Active = false
	case "enable", "disable":
		unit.Enabled = verb == "enable"
		if now && unit.Enabled && !unit.Active {
			unit.Active = true
			unit.Starts++
		}
		if now && !unit.Enabled {
			unit.Active = false
		}
	default:
		return 0, false
	}
	return 0, true
}
