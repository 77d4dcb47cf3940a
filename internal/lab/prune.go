package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A changed stand-in is a new layer over the same base, and the old one would stay in the
// cache for good: every build of the image prunes the layers of its base that are not current.
// A layer that a running lab's overlays still name is left alone, and so are layers while
// any lab is starting on one (the cache lock).

// cacheLockFile is flocked shared by Up, from finding the image built until its overlays are
// mounted, and exclusive by the prune, so no layer goes between those two moments.
const cacheLockFile = ".lock"

// lockCache flocks dir's lock file with how (syscall.LOCK_SH, or LOCK_EX|LOCK_NB).
func lockCache(dir string, how int) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, cacheLockFile), os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // G304: the image cache, the lab's own directory.
	if err != nil {
		return nil, fmt.Errorf("open the image cache's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		return nil, errors.Join(fmt.Errorf("lock the image cache: %w", err), f.Close())
	}
	return func() { _ = f.Close() }, nil
}

// pruneStaleLayers removes the stand-in layers of img's base in CacheRoot other than img's
// own, unless a lab is starting (then they wait for the next build).
func pruneStaleLayers(img Image, log io.Writer) error {
	unlock, err := lockCache(CacheRoot, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		logf(log, "a lab is starting: old stand-in layers are left for the next image build\n")
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	mounts, err := readMountInfo()
	if err != nil {
		return err
	}
	return pruneLayers(CacheRoot, img, mounts, log)
}

// pruneLayers removes from cache every layer of img's base but img's own and those a mount
// names (an overlay's lowerdir, or a mount point inside it).
func pruneLayers(cache string, img Image, mounts []mountInfo, log io.Writer) error {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return fmt.Errorf("read the image cache: %w", err)
	}
	prefix := filepath.Base(img.Dir) + "-beegfs-"
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) || name == filepath.Base(img.Layer) {
			continue
		}
		layer := filepath.Join(cache, name)
		if mountUsing(mounts, layer) {
			logf(log, "stand-in layer %s is not current but still mounted: kept\n", layer)
			continue
		}
		if err := os.RemoveAll(layer); err != nil {
			errs = append(errs, fmt.Errorf("remove old stand-in layer: %w", err))
			continue
		}
		logf(log, "removed old stand-in layer %s\n", layer)
	}
	return errors.Join(errs...)
}

// mountUsing reports whether a mount is at or below dir or names a path there in its options.
func mountUsing(mounts []mountInfo, dir string) bool {
	for _, m := range mounts {
		if within(m.MountPoint, dir) {
			return true
		}
		for _, opt := range m.SuperOpts {
			_, value, ok := strings.Cut(opt, "=")
			if !ok {
				continue
			}
			for _, p := range strings.Split(value, ":") {
				if within(p, dir) {
					return true
				}
			}
		}
	}
	return false
}

func within(p, dir string) bool {
	p = filepath.Clean(p)
	return p == dir || strings.HasPrefix(p, dir+"/")
}
