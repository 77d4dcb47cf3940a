package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Remove stops GPU server name, the counterpart of Add: it stops the host as
// `down` does (signalling only that host's own container), removes its
// overlay, cgroups and boot log, and drops it from the other hosts'
// /etc/hosts, known_hosts and the descriptor. The other hosts keep running.
// login01 cannot be removed: the lab is nothing without it.
func (l *Lab) Remove(ctx context.Context, name string, log io.Writer) error {
	h, err := l.removable(name)
	if err != nil {
		return err
	}
	if handed, err := l.handOff(ctx, "remove", name, log); handed {
		return err
	}
	began := time.Now()
	// Until the container is gone and its state removed, the host stays in
	// the descriptor so that `down` can still clean up after a failure here.
	if err := halt(ctx, h); err != nil {
		return err
	}
	if err := removeHostState(h); err != nil {
		return err
	}
	if err := os.Remove(l.logPath(h.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove boot log of %s: %w", h.Name, err)
	}
	l.Hosts = slices.DeleteFunc(l.Hosts, func(other Host) bool { return other.Name == h.Name })
	all := l.planned()
	if err := writeHostsFiles(l.Hosts, all); err != nil {
		return err
	}
	if err := l.writeKnownHosts(); err != nil {
		return err
	}
	if err := writeNetnsHosts(l.instance(), all); err != nil {
		return err
	}
	if err := l.Save(l.descriptor); err != nil {
		return err
	}
	logf(log, "%s removed in %.1fs\n", h.Name, time.Since(began).Seconds())
	return nil
}

// removable checks everything Remove refuses before it touches anything.
func (l *Lab) removable(name string) (Host, error) {
	if l.descriptor == "" {
		return Host{}, errors.New("lab was not loaded from a descriptor")
	}
	h, ok := l.lookup(name)
	if !ok {
		return Host{}, fmt.Errorf("lab has no host %q", name)
	}
	if h.Role != RoleGPU {
		return Host{}, fmt.Errorf("refusing to remove %s: only GPU servers can be removed, `down` stops the whole lab", name)
	}
	return h, nil
}
