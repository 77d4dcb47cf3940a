package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// sigRTMin3 is systemd's "halt" request (glibc's SIGRTMIN is 34).
const sigRTMin3 = syscall.Signal(34 + 3)

const stopTimeout = 30 * time.Second

// Down stops the lab described at path and removes everything it created.
// Without a descriptor it only removes instance inst's leftover network
// namespace, since processes are started only after the descriptor has been written.
func Down(inst Instance, path string, log io.Writer) error {
	l, err := Load(path)
	if errors.Is(err, os.ErrNotExist) {
		l = &Lab{KnownHostsPath: filepath.Join(filepath.Dir(path), knownHostsFile), Netns: inst.Netns(), Instance: inst.Name(), Namespace: namespaceDir(path)}
	} else if err != nil {
		return err
	}
	if err := l.teardown(log); err != nil {
		return err
	}
	if err := removeDescriptor(path); err != nil {
		return err
	}
	// Boot logs outlive a failed start for diagnosis; an orderly down leaves nothing.
	inst = l.instance()
	if err := os.RemoveAll(inst.logRoot()); err != nil {
		return fmt.Errorf("remove boot logs: %w", err)
	}
	// Only when empty: the directories may hold files that are not the lab's.
	_ = os.Remove(filepath.Dir(path))
	_ = os.Remove(inst.stateRoot())
	return nil
}

func removeDescriptor(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove lab descriptor: %w", err)
	}
	return nil
}

// teardown stops every host, then removes overlays, cgroups and the netns.
// It keeps going after errors so that one stuck host does not leave the rest behind.
func (l *Lab) teardown(log io.Writer) error {
	began := time.Now()
	var errs []error
	for _, h := range l.Hosts {
		errs = append(errs, requestHalt(h))
	}
	for _, h := range l.Hosts {
		errs = append(errs, waitStopped(context.Background(), h))
	}
	for _, h := range l.Hosts {
		errs = append(errs, removeHostState(h))
	}
	errs = append(errs, unmountNamespace(l.Namespace))
	if netnsExists(l.Netns) {
		if _, err := output(context.Background(), "ip", "netns", "delete", l.Netns); err != nil {
			errs = append(errs, fmt.Errorf("delete lab netns: %w", err))
		}
	}
	etcDir := l.instance().netnsEtcDir()
	if err := os.RemoveAll(etcDir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", etcDir, err))
	}
	// /etc/netns may hold other namespaces' files; it goes only when empty.
	_ = os.Remove(filepath.Dir(etcDir))
	if l.KnownHostsPath != "" {
		if err := os.Remove(l.KnownHostsPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove known_hosts: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	logf(log, "lab down in %.1fs\n", time.Since(began).Seconds())
	return nil
}

// ownedInit reports whether h.PID is still the container PID 1 that h's launcher started,
// so a recycled PID is never signalled.
func ownedInit(h Host) bool {
	return isContainerInit(h.PID) && descendsFrom(processParents(), h.PID, h.LauncherPID)
}

// halt stops h as a power button does and waits until its container has exited.
func halt(ctx context.Context, h Host) error {
	if err := requestHalt(h); err != nil {
		return err
	}
	return waitStopped(ctx, h)
}

func requestHalt(h Host) error {
	pid, ok := currentInit(h)
	if !ok {
		return nil
	}
	if err := syscall.Kill(pid, sigRTMin3); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("halt %s: %w", h.Name, err)
	}
	return nil
}

// waitStopped polls until the launcher exited; a container that ignores the
// halt request past the timeout gets its PID 1 killed, which ends its whole PID namespace.
func waitStopped(ctx context.Context, h Host) error {
	deadline := time.Now().Add(stopTimeout)
	killed := false
	for processAlive(h.LauncherPID) && isLauncherOf(h) {
		if time.Now().After(deadline) {
			pid, ok := currentInit(h)
			if killed || !ok {
				return fmt.Errorf("%s (launcher PID %d) did not stop", h.Name, h.LauncherPID)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("kill %s: %w", h.Name, err)
			}
			killed, deadline = true, time.Now().Add(stopTimeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to stop: %w", h.Name, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
	return nil
}

// isLauncherOf checks the command line so that a recycled launcher PID is not
// waited for. The directory, unlike the machine name, differs between instances.
func isLauncherOf(h Host) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", h.LauncherPID))
	if err != nil {
		return false
	}
	return strings.Contains(string(cmdline), "--directory="+h.root()+"\x00")
}

func removeHostState(h Host) error {
	// Before the image goes with Dir: a loop device would keep it alive unseen.
	errs := []error{detachLoop(context.Background(), h.Disk)}
	if h.Dir != "" {
		errs = append(errs, removeUnmounted(h.Dir))
	}
	for _, dir := range h.Cgroups {
		errs = append(errs, removeCgroup(dir))
	}
	return errors.Join(errs...)
}

// removeCgroup removes dir and the sub-cgroups the container's systemd
// created in it (payload, supervisor, ...), deepest first. It retries
// briefly: the kernel releases a cgroup a moment after its last task exits.
func removeCgroup(dir string) error {
	var err error
	for attempt := 0; attempt < 25; attempt++ {
		if err = rmdirTree(dir); err == nil {
			return nil
		}
		time.Sleep(pollInterval)
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}

// rmdirTree removes only directories: cgroupfs refuses to unlink its files,
// and a plain rmdir can never delete data.
func rmdirTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := rmdirTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := syscall.Rmdir(dir); err != nil && err != syscall.ENOENT {
		return err
	}
	return nil
}
