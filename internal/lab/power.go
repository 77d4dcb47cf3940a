package lab

import (
	"context"
	"errors"
	"fmt"
)

// A GPU server of the lab can be powered off and on like a server: Stop halts its container
// and Start boots it again from the same overlay and disk, so everything written on it, /data
// included, is still there. A host that powered itself off (`systemctl poweroff`) is stopped
// too and starts the same way. login01 keeps the lab's mount namespace (see delegate) and is
// never stopped alone: `down` stops the whole lab.

// Stop powers GPU server name off and waits until its container has exited; its overlay,
// disk and descriptor entry stay for Start.
func (l *Lab) Stop(ctx context.Context, name string) error {
	i, err := l.powerable(name)
	if err != nil {
		return err
	}
	if handed, err := l.handOff(ctx, "stop", name, nil); handed {
		return err
	}
	h := l.Hosts[i]
	if err := halt(ctx, h); err != nil {
		return err
	}
	var errs []error
	for _, dir := range h.Cgroups {
		errs = append(errs, removeCgroup(dir))
	}
	l.Hosts[i].PID = 0
	return errors.Join(append(errs, l.Save(l.descriptor))...)
}

// Start boots GPU server name again after Stop, or after it powered itself off, and returns
// when SSH answers.
func (l *Lab) Start(ctx context.Context, name string) error {
	i, err := l.powerable(name)
	if err != nil {
		return err
	}
	if handed, err := l.handOff(ctx, "start", name, nil); handed {
		return err
	}
	if l.Running(name) {
		return fmt.Errorf("%s is running already", name)
	}
	h := &l.Hosts[i]
	if err := l.launch(h); err != nil {
		return err
	}
	if err := l.Save(l.descriptor); err != nil {
		return err
	}
	pid, err := l.waitForInit(ctx, *h)
	if err != nil {
		return err
	}
	h.PID = pid
	if err := l.Save(l.descriptor); err != nil {
		return err
	}
	return l.waitReady(ctx, PlannedHost{Name: h.Name, Address: h.Address, Role: h.Role})
}

// Running reports whether host's container runs, whatever its boot has reached.
func (l *Lab) Running(host string) bool {
	h, ok := l.lookup(host)
	if !ok {
		return false
	}
	_, running := currentInit(h)
	return running
}

// powerable checks what Stop and Start refuse before they touch anything.
func (l *Lab) powerable(name string) (int, error) {
	if l.descriptor == "" {
		return 0, errors.New("lab was not loaded from a descriptor")
	}
	i, err := l.index(name)
	if err != nil {
		return 0, err
	}
	if l.Hosts[i].Role != RoleGPU {
		return 0, fmt.Errorf("refusing to power %s off or on: only GPU servers can be, `down` stops the whole lab", name)
	}
	return i, nil
}
