package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// mountInfo is one line of /proc/self/mountinfo, reduced to what the lab needs.
type mountInfo struct {
	MountPoint string
	FSType     string
	SuperOpts  []string
}

func readMountInfo() ([]mountInfo, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	var mounts []mountInfo
	for _, line := range strings.Split(string(data), "\n") {
		if m, ok := parseMountInfoLine(line); ok {
			mounts = append(mounts, m)
		}
	}
	return mounts, nil
}

func parseMountInfoLine(line string) (mountInfo, bool) {
	pre, post, ok := strings.Cut(line, " - ")
	if !ok {
		return mountInfo{}, false
	}
	preFields, postFields := strings.Fields(pre), strings.Fields(post)
	if len(preFields) < 5 || len(postFields) < 3 {
		return mountInfo{}, false
	}
	return mountInfo{
		MountPoint: unescapeMountPath(preFields[4]),
		FSType:     postFields[0],
		SuperOpts:  strings.Split(postFields[2], ","),
	}, true
}

// unescapeMountPath undoes the kernel's octal escaping of spaces and the like.
func unescapeMountPath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsBelow lists mount points at or below dir, deepest first.
func mountsBelow(dir string) ([]string, error) {
	mounts, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	var below []string
	for _, m := range mounts {
		if m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/") {
			below = append(below, m.MountPoint)
		}
	}
	slices.Reverse(below)
	return below, nil
}

func unmountBelow(dir string) error {
	mounts, err := mountsBelow(dir)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := syscall.Unmount(m, 0); err != nil && err != syscall.EINVAL {
			// A container that just exited may still pin the mount for a moment.
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL {
				return fmt.Errorf("unmount %s: %w", m, err)
			}
		}
	}
	return nil
}

// cgroupDirsFor returns, for every cgroup hierarchy this process belongs to,
// the directory of a child cgroup named leaf. Each container's launcher needs
// its own: with --keep-unit, systemd-nspawn uses the caller's cgroup and
// containers sharing one collide.
func cgroupDirsFor(leaf string) ([]string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	mounts, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("unexpected line in /proc/self/cgroup: %q", line)
		}
		mountPoint, ok := cgroupMountPoint(mounts, parts[1])
		if !ok {
			return nil, fmt.Errorf("no mount found for cgroup hierarchy %q", parts[1])
		}
		dirs = append(dirs, filepath.Join(mountPoint, parts[2], leaf))
	}
	return dirs, nil
}

func cgroupMountPoint(mounts []mountInfo, controllers string) (string, bool) {
	for _, m := range mounts {
		if controllers == "" && m.FSType == "cgroup2" {
			return m.MountPoint, true
		}
		if controllers != "" && m.FSType == "cgroup" && containsAll(m.SuperOpts, strings.Split(controllers, ",")) {
			return m.MountPoint, true
		}
	}
	return "", false
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// createCgroup makes a cgroup directory. A v1 cpuset cgroup starts without
// CPUs and memory nodes and refuses tasks ("No space left on device") until
// it inherits them from its parent.
func createCgroup(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	for _, name := range []string{"cpuset.cpus", "cpuset.mems"} {
		parent, err := os.ReadFile(filepath.Join(filepath.Dir(dir), name)) //nolint:gosec // G304: a cgroup file the lab itself named.
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read parent %s: %w", name, err)
		}
		// The kernel made the file with the cgroup, so the mode is never used;
		// the path is the lab's own cgroup and one of the two names above.
		if err := os.WriteFile(filepath.Join(dir, name), parent, 0o600); err != nil { //nolint:gosec // G703: see above.
			return fmt.Errorf("set %s of %s: %w", name, dir, err)
		}
	}
	return nil
}

// Every booted host's systemd, journald and logind hold inotify instances, all as the machine's
// root, and the kernel allows 128 per user by default: about 30 hosts use them up, and the next
// container's systemd dies with "Failed to allocate manager object: Too many open files".
const (
	inotifyLimitPath = "/proc/sys/fs/inotify/max_user_instances"
	inotifyInstances = 8192
)

// raiseInotifyLimit lifts the machine's limit to inotifyInstances; a higher one is left alone.
func raiseInotifyLimit() error {
	data, err := os.ReadFile(inotifyLimitPath)
	if err != nil {
		return fmt.Errorf("read the inotify instance limit: %w", err)
	}
	current, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return fmt.Errorf("read the inotify instance limit: %q: %w", data, err)
	}
	if current >= inotifyInstances {
		return nil
	}
	if err := os.WriteFile(inotifyLimitPath, []byte(strconv.Itoa(inotifyInstances)+"\n"), 0o644); err != nil { //nolint:gosec // G306: a sysctl, world-readable by design
		return fmt.Errorf("raise the inotify instance limit from %d to %d: %w", current, inotifyInstances, err)
	}
	return nil
}
