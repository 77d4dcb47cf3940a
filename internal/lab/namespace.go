package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// StandInNamespace is where every lab host sees the lab-wide directory that
// the BeeGFS stand-in's client bind-mounts over its mountpoint (see
// image/beegfs-standin): one tmpfs on the machine shared by all hosts, so
// files and numeric owners written on one host are seen on every host, as
// on one BeeGFS filesystem.
const StandInNamespace = "/var/lib/beegfs-standin/namespace"

// namespaceSource is what findmnt shows as the mount's source: the name a
// real BeeGFS client mount carries.
const namespaceSource = "beegfs_nodev"

// namespaceDir is the shared directory's place on the machine, beside the descriptor.
func namespaceDir(descriptor string) string {
	return filepath.Join(filepath.Dir(descriptor), "beegfs-namespace")
}

func mountNamespace(dir string) error {
	// Lab hosts' users must reach their homes below it.
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: see above.
		return fmt.Errorf("create shared BeeGFS namespace: %w", err)
	}
	if err := syscall.Mount(namespaceSource, dir, "tmpfs", syscall.MS_NODEV|syscall.MS_NOSUID, "size=256m,mode=0755"); err != nil {
		return fmt.Errorf("mount shared BeeGFS namespace at %s: %w", dir, err)
	}
	return nil
}

// unmountNamespace removes the shared directory once no host uses it; its
// content goes with the lab.
func unmountNamespace(dir string) error {
	if dir == "" {
		return nil
	}
	if err := unmountBelow(dir); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove shared BeeGFS namespace: %w", err)
	}
	return nil
}
