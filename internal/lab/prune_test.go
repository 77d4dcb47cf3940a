package lab

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// An image build removes its base's stand-in layers other than the current one, but never one
// a mounted overlay uses, another base's layer, the base itself or a build in progress.
func TestPruneLayersKeepsCurrentMountedAndOtherBases(t *testing.T) {
	cache := t.TempDir()
	img := Image{Name: "trixie-c9050898ed86-beegfs-8fe16177", Dir: filepath.Join(cache, "trixie-c9050898ed86"),
		Layer: filepath.Join(cache, "trixie-c9050898ed86-beegfs-8fe16177")}
	dirs := []string{
		"trixie-c9050898ed86", "trixie-c9050898ed86-beegfs-8fe16177", // the current image
		"trixie-c9050898ed86-beegfs-623022f6",                      // an old layer of the current base
		"trixie-c9050898ed86-beegfs-11111111",                      // an old layer a running lab mounts
		"trixie-c9050898ed86-beegfs-22222222",                      // an old layer with a mount inside it
		"forky-2fba63068178", "forky-2fba63068178-beegfs-3d858cdb", // another release's
		"trixie-000000000000-beegfs-623022f6",            // another base's
		".build-trixie-c9050898ed86-beegfs-33333333-123", // a build in progress
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(cache, d, "root", "usr"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	mounts := []mountInfo{
		{MountPoint: "/var/lib/gpucluster-lab-old/login01/root", FSType: "overlay", SuperOpts: []string{"rw",
			"lowerdir=" + filepath.Join(cache, "trixie-c9050898ed86-beegfs-11111111", "root") + ":" + filepath.Join(cache, "trixie-c9050898ed86", "rootfs"),
			"upperdir=/var/lib/gpucluster-lab-old/login01/upper", "workdir=/var/lib/gpucluster-lab-old/login01/work", "uuid=on"}},
		{MountPoint: filepath.Join(cache, "trixie-c9050898ed86-beegfs-22222222", "root", "proc"), FSType: "proc", SuperOpts: []string{"rw"}},
	}
	if err := pruneLayers(cache, img, mounts, io.Discard); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return d == "trixie-c9050898ed86-beegfs-623022f6" })
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left in the cache:\n%v\nwant\n%v", left, want)
	}
}

// While a lab is starting (Up holds the cache lock shared), a prune does not wait and does not run.
func TestCacheLockKeepsPruneOutWhileALabStarts(t *testing.T) {
	cache := t.TempDir()
	unlock, err := lockCache(cache, syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockCache(cache, syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Fatal("the prune's exclusive lock was taken while a lab held the shared one")
	}
	unlock()
	unlockEx, err := lockCache(cache, syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		t.Fatalf("the prune's lock after the lab's start: %v", err)
	}
	unlockEx()
}
