package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// A test talks to the lab from inside `ip netns exec`, which gives it a
// mount namespace of its own with a /sys that hides the cgroup hierarchies.
// There it can neither launch systemd-nspawn nor mount or unmount an overlay
// where the lab's other overlays live, so Add and Remove hand their work to
// the lab command (Lab.Command) in the mount namespace the lab was started
// in, which login01's launcher still holds. Reboot and the disk changes do
// the same, so that loop devices and overlays are handled where they live.

// labMountNamespace returns the mount namespace file of the lab, and whether
// this process already runs in it.
func (l *Lab) labMountNamespace() (path string, inside bool, err error) {
	login, ok := l.lookup(LoginHost)
	if !ok || !processAlive(login.LauncherPID) || !isLauncherOf(login) {
		return "", false, errors.New("login01's launcher is not running: restart the lab")
	}
	path = "/proc/" + strconv.Itoa(login.LauncherPID) + "/ns/mnt"
	theirs, err := os.Readlink(path)
	if err != nil {
		return "", false, fmt.Errorf("read the lab's mount namespace: %w", err)
	}
	ours, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return "", false, fmt.Errorf("read own mount namespace: %w", err)
	}
	return path, ours == theirs, nil
}

// handOff hands `gpucluster-lab verb host` to the lab's mount namespace when this process
// runs outside it. handed reports that the caller must do no more than return err: the work
// was done there, or the namespace could not be told. A nil log shows the command's output
// only in its error.
func (l *Lab) handOff(ctx context.Context, verb, host string, log io.Writer) (handed bool, err error) {
	mountNS, inside, err := l.labMountNamespace()
	switch {
	case err != nil:
		return true, err
	case inside:
		return false, nil
	case log == nil:
		return true, l.delegateQuiet(ctx, mountNS, verb, host)
	}
	return true, l.delegate(ctx, mountNS, verb, host, log)
}

// delegate runs `gpucluster-lab verb host` in the lab's mount namespace for
// this lab's descriptor and instance, then reloads l from the descriptor.
func (l *Lab) delegate(ctx context.Context, mountNS, verb, host string, log io.Writer) error {
	if l.Command == "" {
		return fmt.Errorf("cannot %s %s from this mount namespace: the descriptor names no lab command (restart the lab with `make lab-up`, or run `gpucluster-lab %s %s`)", verb, host, verb, host)
	}
	// The lab command, its descriptor and the host name are the lab's own (the
	// name was validated by the caller), and running them as root is the point.
	cmd := exec.CommandContext(ctx, "nsenter", "--mount="+mountNS, "--", l.Command, verb, host) //nolint:gosec // G204: see above.
	cmd.Env = append(os.Environ(), EnvDescriptor+"="+l.descriptor, EnvInstance+"="+l.Instance)
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run()
	if runErr != nil {
		runErr = fmt.Errorf("gpucluster-lab %s %s: %w", verb, host, runErr)
	}
	// Even a failed run may have changed the descriptor; l must follow it.
	fresh, err := Load(l.descriptor)
	if err != nil {
		return errors.Join(runErr, err)
	}
	*l = *fresh
	return runErr
}

// delegateQuiet is delegate for the API calls that take no log: the lab
// command's output matters only when it fails.
func (l *Lab) delegateQuiet(ctx context.Context, mountNS, verb, host string) error {
	var out bytes.Buffer
	if err := l.delegate(ctx, mountNS, verb, host, &out); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}
