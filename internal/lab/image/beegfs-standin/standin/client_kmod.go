package main

// STAND-IN for the kernel's module tools (kmod's modprobe, lsmod, rmmod),
// used only by the gpucluster test lab, whose containers can load no module.
// They know one module, beegfs: modprobe "loads" the build for the running
// kernel release (a marker under /run, which a reboot clears as it unloads
// a real module), lsmod lists it, rmmod unloads it unless a mount uses it.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func init() {
	tools["modprobe"] = modprobeMain
	tools["lsmod"] = lsmodMain
	tools["rmmod"] = rmmodMain
}

const (
	moduleName   = "beegfs"
	loadedMarker = "/run/beegfs-standin/module-beegfs"
)

// kernelRelease is `uname -r`.
func kernelRelease() string {
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(release))
}

// modulePath is where the client's autobuild installs the module.
func modulePath(release string) string {
	return "/lib/modules/" + release + "/updates/fs/beegfs_autobuild/beegfs.ko"
}

func moduleLoaded() bool {
	_, err := os.Stat(loadedMarker)
	return err == nil
}

func modprobeMain(args []string) int {
	remove, names := false, []string{}
	for _, a := range args {
		switch {
		case a == "-r" || a == "--remove":
			remove = true
		case strings.HasPrefix(a, "-"):
		default:
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		fmt.Fprintln(os.Stderr, "modprobe: ERROR: missing parameters. See -h.")
		return 1
	}
	if remove {
		return rmmodMain(names)
	}
	release := kernelRelease()
	for _, n := range names {
		if n != moduleName {
			fmt.Fprintf(os.Stderr, "modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n", n, release)
			return 1
		}
		if moduleLoaded() {
			continue
		}
		if _, err := os.Stat(modulePath(release)); err != nil {
			fmt.Fprintf(os.Stderr, "modprobe: FATAL: Module %s not found in directory /lib/modules/%s\n", n, release)
			return 1
		}
		if err := os.MkdirAll(filepath.Dir(loadedMarker), 0o755); err != nil { //nolint:gosec // like /sys/module
			fmt.Fprintf(os.Stderr, "modprobe: ERROR: could not insert '%s': %v\n", n, err)
			return 1
		}
		if err := os.WriteFile(loadedMarker, []byte(modulePath(release)+"\n"), 0o644); err != nil { //nolint:gosec // readable as /proc/modules
			fmt.Fprintf(os.Stderr, "modprobe: ERROR: could not insert '%s': %v\n", n, err)
			return 1
		}
	}
	return 0
}

func lsmodMain([]string) int {
	fmt.Println("Module                  Size  Used by")
	if moduleLoaded() {
		fmt.Printf("%-19s %8d  %d\n", moduleName, 1048576, len(beegfsMounts()))
	}
	return 0
}

func rmmodMain(args []string) int {
	for _, n := range args {
		if strings.HasPrefix(n, "-") {
			continue
		}
		if n != moduleName || !moduleLoaded() {
			fmt.Fprintf(os.Stderr, "rmmod: ERROR: Module %s is not currently loaded\n", n)
			return 1
		}
		if len(beegfsMounts()) > 0 {
			fmt.Fprintf(os.Stderr, "rmmod: ERROR: Module %s is in use\n", n)
			return 1
		}
		if err := os.Remove(loadedMarker); err != nil {
			fmt.Fprintf(os.Stderr, "rmmod: ERROR: could not remove module %s: %v\n", n, err)
			return 1
		}
	}
	return 0
}

// beegfsMounts lists the mountpoints of the stand-in's mounts: the shared
// namespace bound elsewhere, source beegfs_nodev.
func beegfsMounts() []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 2 {
			continue
		}
		if tail[1] == "beegfs_nodev" && fields[4] != standInNamespace {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts
}
