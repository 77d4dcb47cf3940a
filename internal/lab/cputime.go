package lab

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUTime is the CPU the host's container has used since it started, everything in it
// (its sshd, sudo, systemd and daemons) counted, from its cgroup: cgroup v2's cpu.stat, or
// cgroup v1's cpuacct.usage where the machine has no v2 controller for it. Benchmarks take the
// difference around what they measure, the price of that work on the host, which the client's
// own figures cannot show. The cgroups are read through the host's launcher, whose mount
// namespace has them: inside `ip netns exec`, /sys hides them.
func (h Host) CPUTime() (time.Duration, error) {
	root := "/proc/" + strconv.Itoa(h.LauncherPID) + "/root"
	if h.LauncherPID == 0 {
		root = "/"
	}
	for _, cgroup := range h.Cgroups {
		dir := filepath.Join(root, cgroup)
		if d, ok, err := readCPUStat(filepath.Join(dir, "cpu.stat")); ok || err != nil {
			return d, err
		}
		if d, ok, err := readCPUAcct(filepath.Join(dir, "cpuacct.usage")); ok || err != nil {
			return d, err
		}
	}
	return 0, fmt.Errorf("no CPU counter for %s in its cgroups %q", h.Name, h.Cgroups)
}

// readCPUStat reads usage_usec; ok is false when path does not exist or lacks it, as a cgroup
// v2 directory without the cpu controller's accounting does.
func readCPUStat(path string) (time.Duration, bool, error) {
	data, ok, err := readIfExists(path)
	if !ok {
		return 0, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), "usage_usec "); found {
			usec, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, false, fmt.Errorf("%s: %w", path, err)
			}
			return time.Duration(usec) * time.Microsecond, true, nil
		}
	}
	return 0, false, nil
}

// readCPUAcct reads cgroup v1's nanoseconds; ok is false when path does not exist.
func readCPUAcct(path string) (time.Duration, bool, error) {
	data, ok, err := readIfExists(path)
	if !ok {
		return 0, false, err
	}
	nsec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return time.Duration(nsec), true, nil
}

// readIfExists reads path; ok is false when it does not exist or cannot be read (err says which).
func readIfExists(path string) (data []byte, ok bool, err error) {
	data, err = os.ReadFile(path) //nolint:gosec // G304: a path under the lab's own cgroups.
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	return data, err == nil, err
}
