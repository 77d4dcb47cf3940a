package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Every lab host has a disk of its own, as the guide's servers do: GPU
// servers hold BeeGFS storage on /data, login01 the management and metadata
// on /beegfs. The disk is a sparse ext4 image file in the host's state
// directory on a loop device of the machine; the host mounts it by UUID.

const (
	diskSize     = 256 << 20
	diskImage    = "disk.img"
	diskNode     = "/dev/lab-disk"
	diskTmpfiles = "etc/tmpfiles.d/lab-disk.conf"
)

// Disk is a lab host's separate filesystem.
type Disk struct {
	// Mountpoint is where the host mounts it: /data or /beegfs.
	Mountpoint string
	// UUID is the filesystem's UUID, as blkid and findmnt report it.
	UUID string
	// Image is the backing file on the machine.
	Image string
	// LoopDevice is the machine's /dev/loopN the image is attached to; it is
	// kept across DetachDisk so that AttachDisk can reuse the same device.
	LoopDevice string
	// Detached is set by DetachDisk: the host finds no disk from its next boot on.
	Detached bool `json:",omitempty"`
}

// DiskMountpoint is where hosts of role mount their lab disk.
func DiskMountpoint(role string) string {
	if role == RoleLogin {
		return "/beegfs"
	}
	return "/data"
}

// mountUnit is the unit name systemd gives the mountpoint (one path component).
func (d Disk) mountUnit() string { return strings.TrimPrefix(d.Mountpoint, "/") + ".mount" }

// createDisk makes a fresh filesystem for h and attaches it to a loop device.
// h.Disk is set as soon as a loop device exists, so that cleanup finds it.
func createDisk(ctx context.Context, h *Host) error {
	uuid, err := randomUUID()
	if err != nil {
		return err
	}
	image := filepath.Join(h.Dir, diskImage)
	f, err := os.OpenFile(image, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600) //nolint:gosec // G304: the host's own state directory.
	if err != nil {
		return fmt.Errorf("create disk image of %s: %w", h.Name, err)
	}
	err = f.Truncate(diskSize)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("size disk image of %s: %w", h.Name, err)
	}
	if _, err := output(ctx, "mkfs.ext4", "-q", "-F", "-U", uuid, image); err != nil {
		return fmt.Errorf("make filesystem for %s: %w", h.Name, err)
	}
	loop, err := output(ctx, "losetup", "--find", "--show", image)
	if err != nil {
		return fmt.Errorf("attach disk of %s: %w", h.Name, err)
	}
	h.Disk = &Disk{Mountpoint: DiskMountpoint(h.Role), UUID: uuid, Image: image, LoopDevice: strings.TrimSpace(loop)}
	return nil
}

// writeDiskConfig installs what mounts the disk at boot. On a real server
// the /etc/fstab line is enough; in a container systemd's fstab generator
// skips device entries and no udev makes device nodes or by-uuid links, so
// the lab also writes the unit the generator would make and the tmpfiles
// lines that stand in for udev.
func writeDiskConfig(h Host) error {
	d := h.Disk
	unit := filepath.Join("etc/systemd/system", d.mountUnit())
	files := map[string]string{
		"etc/fstab": "# <file system> <mount point> <type> <options> <dump> <pass>\n" +
			fmt.Sprintf("UUID=%s %s ext4 defaults,nofail 0 2\n", d.UUID, d.Mountpoint),
		unit: fmt.Sprintf(`# Lab stand-in for what systemd-fstab-generator makes of the /etc/fstab line
# for %[1]s: the generator ignores device entries inside containers.
[Unit]
Documentation=man:fstab(5) man:systemd-fstab-generator(8)

[Mount]
What=/dev/disk/by-uuid/%[2]s
Where=%[1]s
Type=ext4
Options=defaults,nofail
`, d.Mountpoint, d.UUID),
	}
	for rel, content := range files {
		// System configuration systemd and every user read.
		if err := os.WriteFile(filepath.Join(h.root(), rel), []byte(content), 0o644); err != nil { //nolint:gosec // G306: see above.
			return fmt.Errorf("write %s of %s: %w", rel, h.Name, err)
		}
	}
	if err := writeDiskNode(h); err != nil {
		return err
	}
	wants := filepath.Join(h.root(), "etc/systemd/system/local-fs.target.wants")
	// Directories of the system's unit configuration, as systemctl makes them.
	if err := os.MkdirAll(wants, 0o755); err != nil { //nolint:gosec // G301: see above.
		return fmt.Errorf("create %s of %s: %w", wants, h.Name, err)
	}
	if err := os.Symlink("/"+unit, filepath.Join(wants, d.mountUnit())); err != nil {
		return fmt.Errorf("enable %s on %s: %w", d.mountUnit(), h.Name, err)
	}
	// The mountpoint, which the root filesystem of a real server has too.
	if err := os.MkdirAll(filepath.Join(h.root(), d.Mountpoint), 0o755); err != nil { //nolint:gosec // G301: see above.
		return fmt.Errorf("create %s on %s: %w", d.Mountpoint, h.Name, err)
	}
	return nil
}

// writeDiskNode writes the tmpfiles.d lines that make the disk's device node
// and by-uuid link at each boot, or, for a detached disk, none: a host booting
// then finds no such device, like a server whose array failed to assemble.
func writeDiskNode(h Host) error {
	d := h.Disk
	content := "# Lab stand-in for udev: the node of this host's disk (" + d.Mountpoint + ") and its by-uuid link.\n"
	if d.Detached {
		content += "# Detached by the lab (gpucluster-lab disk-detach): no disk at boot.\n"
	} else {
		majorMinor, err := deviceNumbers(d.LoopDevice)
		if err != nil {
			return err
		}
		content += fmt.Sprintf("b! %s 0660 root disk - %s\nL! /dev/disk/by-uuid/%s - - - - ../../%s\n", diskNode, majorMinor, d.UUID, filepath.Base(diskNode))
	}
	// Read by systemd-tmpfiles; world-readable like every tmpfiles.d file.
	if err := os.WriteFile(filepath.Join(h.root(), diskTmpfiles), []byte(content), 0o644); err != nil { //nolint:gosec // G306: see above.
		return fmt.Errorf("write %s of %s: %w", diskTmpfiles, h.Name, err)
	}
	return nil
}

// deviceNumbers returns "MAJOR:MINOR" of a block device node.
func deviceNumbers(dev string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dev, &st); err != nil {
		return "", fmt.Errorf("stat %s: %w", dev, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
		return "", fmt.Errorf("%s is not a block device", dev)
	}
	rdev := st.Rdev
	major := (rdev>>8)&0xfff | (rdev>>32)&^uint64(0xfff)
	minor := rdev&0xff | (rdev>>12)&^uint64(0xff)
	return fmt.Sprintf("%d:%d", major, minor), nil
}

// loopBackingFile returns the file attached to a loop device, "" when none is.
func loopBackingFile(dev string) string {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file")) //nolint:gosec // G304: a sysfs file of the lab's own loop device.
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSpace(string(data)), " (deleted)")
}

// detachLoop frees the disk's loop device if it still holds the disk's
// image; a device that meanwhile holds something else is not the lab's.
// The kernel detaches a device that is still mounted when it is unmounted.
func detachLoop(ctx context.Context, d *Disk) error {
	if d == nil || d.LoopDevice == "" || loopBackingFile(d.LoopDevice) != d.Image {
		return nil
	}
	if _, err := output(ctx, "losetup", "--detach", d.LoopDevice); err != nil {
		return fmt.Errorf("detach %s: %w", d.LoopDevice, err)
	}
	return nil
}

// Disk returns the lab disk of host.
func (l *Lab) Disk(host string) (Disk, error) {
	h, ok := l.lookup(host)
	if !ok {
		return Disk{}, fmt.Errorf("lab has no host %q", host)
	}
	if h.Disk == nil {
		return Disk{}, fmt.Errorf("%s has no lab disk (the lab was started by an older gpucluster-lab)", host)
	}
	return *h.Disk, nil
}

// DetachDisk takes host's disk away, as when a server's array fails to
// assemble: the loop device is released and from the next boot on the host
// has no device for the filesystem. A host that has it mounted keeps it
// until the next unmount, that is its next reboot.
func (l *Lab) DetachDisk(ctx context.Context, host string) error {
	return l.changeDisk(ctx, host, "disk-detach", func(h Host) error {
		if err := detachLoop(ctx, h.Disk); err != nil {
			return err
		}
		h.Disk.Detached = true
		return writeDiskNode(h)
	})
}

// AttachDisk gives host its disk back, with the same filesystem and data,
// on the same loop device when it is still free, so that a device node the
// host still has stays valid; the host mounts it at its next boot.
func (l *Lab) AttachDisk(ctx context.Context, host string) error {
	return l.changeDisk(ctx, host, "disk-attach", func(h Host) error {
		d := h.Disk
		switch backing := loopBackingFile(d.LoopDevice); backing {
		case d.Image:
			if !d.Detached {
				return nil
			}
			return fmt.Errorf("the detach of %s's disk has not taken effect yet (it is still mounted): reboot %s first", h.Name, h.Name)
		case "":
			if _, err := output(ctx, "losetup", d.LoopDevice, d.Image); err != nil {
				return fmt.Errorf("attach disk of %s to %s: %w", h.Name, d.LoopDevice, err)
			}
		default:
			// Another lab took the device meanwhile: the host gets a new
			// node at its next boot.
			loop, err := output(ctx, "losetup", "--find", "--show", d.Image)
			if err != nil {
				return fmt.Errorf("attach disk of %s: %w", h.Name, err)
			}
			d.LoopDevice = strings.TrimSpace(loop)
		}
		d.Detached = false
		return writeDiskNode(h)
	})
}

// changeDisk runs change on host's disk in the lab's mount namespace (where
// the host's overlay is mounted), delegating there if need be, and saves the
// descriptor.
func (l *Lab) changeDisk(ctx context.Context, host, verb string, change func(Host) error) error {
	if l.descriptor == "" {
		return errors.New("lab was not loaded from a descriptor")
	}
	i, err := l.index(host)
	if err != nil {
		return err
	}
	if l.Hosts[i].Disk == nil {
		return fmt.Errorf("%s has no lab disk (the lab was started by an older gpucluster-lab)", host)
	}
	if handed, err := l.handOff(ctx, verb, host, nil); handed {
		return err
	}
	changeErr := change(l.Hosts[i])
	// Even a failed change may have moved the loop device; the descriptor must follow.
	return errors.Join(changeErr, l.Save(l.descriptor))
}

func (l *Lab) index(host string) (int, error) {
	for i, h := range l.Hosts {
		if h.Name == host {
			return i, nil
		}
	}
	return 0, fmt.Errorf("lab has no host %q", host)
}
