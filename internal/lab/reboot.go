package lab

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A lab host reboots like a server: systemd-nspawn exits with status 133 and
// the launcher starts it again (see launch), so the container's PID 1
// changes. Everything that needs it asks currentInit.

// currentInit returns the host's PID 1 as it is now: h.PID until the host
// reboots, then the init its launcher started since. ok is false while the
// host is down.
func currentInit(h Host) (pid int, ok bool) {
	if ownedInit(h) {
		return h.PID, true
	}
	if !processAlive(h.LauncherPID) || !isLauncherOf(h) {
		return 0, false
	}
	return findContainerInit(h.LauncherPID)
}

// Reboot reboots host from inside, as `systemctl reboot` on a server does,
// and returns when it has booted again and SSH answers; the descriptor then
// records the new PID 1.
func (l *Lab) Reboot(ctx context.Context, host string) error {
	if l.descriptor == "" {
		return errors.New("lab was not loaded from a descriptor")
	}
	i, err := l.index(host)
	if err != nil {
		return err
	}
	if handed, err := l.handOff(ctx, "reboot", host, nil); handed {
		return err
	}
	h := l.Hosts[i]
	old, ok := currentInit(h)
	if !ok {
		return fmt.Errorf("%s is not running", host)
	}
	if _, _, err := l.Exec(ctx, host, "systemctl --no-block reboot"); err != nil {
		return fmt.Errorf("reboot %s: %w", host, err)
	}
	h.PID = old
	pid, err := l.waitForNewInit(ctx, h)
	if err != nil {
		return err
	}
	l.Hosts[i].PID = pid
	if err := l.Save(l.descriptor); err != nil {
		return err
	}
	return l.waitReady(ctx, PlannedHost{Name: h.Name, Address: h.Address, Role: h.Role})
}

// waitForNewInit waits until h.PID has gone and the launcher started a new PID 1.
func (l *Lab) waitForNewInit(ctx context.Context, h Host) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	for {
		if pid, ok := currentInit(h); ok && pid != h.PID {
			return pid, nil
		}
		if !processAlive(h.LauncherPID) {
			return 0, fmt.Errorf("%s did not come back from the reboot (its launcher exited), see %s", h.Name, l.logPath(h.Name))
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s did not come back from the reboot: %w", h.Name, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}
