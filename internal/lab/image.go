package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// CacheRoot holds built images, outside the repository so `git clean` keeps them.
const CacheRoot = "/var/cache/gpucluster-lab"

//go:embed image/customize.sh
var customizeScript string

//go:embed image/fetch-repo.sh
var fetchRepoScript string

//go:embed image/nvidia-smi
var nvidiaSMIStandIn []byte

// beegfsStandIn is the source of the lab's stand-in packages for ThinkParQ's
// BeeGFS, which is not in Debian (see image/beegfs-standin/build-debs.sh).
//
//go:embed image/beegfs-standin
var beegfsStandIn embed.FS

// StandInVersion is the version of the BeeGFS stand-in packages: the release
// the guide targets, marked so that nobody mistakes them for ThinkParQ's.
const StandInVersion = "8.4.0-0labstandin1"

const standInDir = "image/beegfs-standin"

// recipeVersion changes whenever the Go side of the build changes in a way
// that the hashed inputs below would not capture.
const recipeVersion = "3"

var imagePackages = []string{
	"systemd", "systemd-sysv", "dbus", "iproute2", "openssh-server", "ufw", "sudo",
	"sudo-rs", "iptables", "netcat-openbsd", "procps", "less", "passwd", "lsb-release",
	"util-linux", "rsync",
}

// repoPackages are not installed in the image: hosts start bare of MUNGE and
// Slurm, and the provider installs them from the image's local apt
// repository at RepoDir. slurm-wlm-nvml-plugin is not among them: trixie
// ships it only in contrib, and lab hosts have no real GPUs for it anyway.
var repoPackages = []string{"munge", "slurmd", "slurmctld", "slurm-client", "slurmdbd", "mariadb-server"}

// RepoDir is the local apt repository inside every lab host (a `file:` source).
const RepoDir = "/srv/lab-apt"

const (
	imageMirror = "http://deb.debian.org/debian"
	adminUser   = "admin"
	adminUID    = 1000
)

// Image is a built, cached lab image: a base (Debian with the lab's tools and
// local repository, built by debootstrap in minutes) and over it a thin layer
// holding the BeeGFS stand-in, so that a changed stand-in is rebuilt in
// seconds and the base is shared by every version of it.
type Image struct {
	Name string
	// Dir is the base's directory: its root filesystem and the admin's credentials.
	Dir string
	// Release is the Debian release the image is built from (see EnvRelease).
	Release string
	// Layer is the stand-in layer's directory; hosts mount it over the base.
	Layer string
}

func (i Image) RootFS() string    { return filepath.Join(i.Dir, "rootfs") }
func (i Image) layerRoot() string { return filepath.Join(i.Layer, "root") }

// LowerDirs is the overlay lowerdir option of a host: the layer over the base.
func (i Image) LowerDirs() string    { return i.layerRoot() + ":" + i.RootFS() }
func (i Image) AdminKeyPath() string { return filepath.Join(i.Dir, "admin_ed25519") }
func (i Image) passwordPath() string { return filepath.Join(i.Dir, "admin_password") }
func (i Image) adminPassword() (string, error) {
	pw, err := os.ReadFile(i.passwordPath())
	if err != nil {
		return "", fmt.Errorf("read admin password of image %s: %w", i.Name, err)
	}
	return strings.TrimSpace(string(pw)), nil
}

// CurrentImage names the image the current recipe produces from release; the
// names carry hashes of the recipe so a changed recipe never reuses a stale
// base or layer.
func CurrentImage(release string) Image {
	base := baseImage(release)
	h := sha256.New()
	h.Write([]byte(base.Name))
	h.Write([]byte{0})
	h.Write([]byte(StandInVersion))
	h.Write([]byte{0})
	hashStandIn(h)
	base.Name += "-beegfs-" + hex.EncodeToString(h.Sum(nil))[:8]
	base.Layer = filepath.Join(CacheRoot, base.Name)
	return base
}

// baseImage names the base of release's image, without the stand-in layer.
func baseImage(release string) Image {
	h := sha256.New()
	for _, part := range []string{recipeVersion, release, imageMirror, strings.Join(imagePackages, ","),
		strings.Join(repoPackages, ","), RepoDir, fetchRepoScript, customizeScript} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	// Only when set, so that the images of releases without one keep their names.
	if conf := releaseAptConf[release]; conf != "" {
		h.Write([]byte(conf))
		h.Write([]byte{0})
	}
	name := release + "-" + hex.EncodeToString(h.Sum(nil))[:12]
	return Image{Name: name, Dir: filepath.Join(CacheRoot, name), Release: release}
}

// Built reports whether the image exists; builds are renamed into place only when complete.
func (i Image) Built() bool {
	for _, dir := range []string{i.RootFS(), i.layerRoot()} {
		if _, err := os.Stat(dir); err != nil {
			return false
		}
	}
	return true
}

// BuildImage builds the current image of release, base and layer, unless
// cached. Progress goes to log.
func BuildImage(ctx context.Context, release string, log io.Writer) (Image, error) {
	img := CurrentImage(release)
	if img.Built() {
		logf(log, "image %s is cached in %s\n", img.Name, img.Layer)
		return img, pruneStaleLayers(img, log)
	}
	if err := os.MkdirAll(CacheRoot, 0o700); err != nil {
		return img, fmt.Errorf("create image cache: %w", err)
	}
	if _, err := os.Stat(img.RootFS()); err != nil {
		if err := buildCached(img.Dir, func(tmp string) error {
			return buildInto(ctx, Image{Name: img.Name, Dir: tmp, Release: release}, log)
		}); err != nil {
			return img, err
		}
		logf(log, "base image built in %s\n", img.Dir)
	}
	if err := buildCached(img.Layer, func(tmp string) error { return buildLayer(ctx, img, tmp, log) }); err != nil {
		return img, err
	}
	logf(log, "image %s built in %s\n", img.Name, img.Layer)
	return img, pruneStaleLayers(img, log)
}

// buildCached builds into a scratch directory next to dir and renames it
// into place only when build succeeded, so a cached directory is complete.
func buildCached(dir string, build func(tmp string) error) error {
	tmp, err := os.MkdirTemp(CacheRoot, ".build-"+filepath.Base(dir)+"-")
	if err != nil {
		return fmt.Errorf("create image build directory: %w", err)
	}
	if err := build(tmp); err != nil {
		return errors.Join(err, removeUnmounted(tmp))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return errors.Join(fmt.Errorf("move built image into place: %w", err), removeUnmounted(tmp))
	}
	return nil
}

// buildLayer installs the BeeGFS stand-in over img's base into tmp/root
// through an overlay, and adds its packages to the local repository there,
// so that apt inside the hosts knows them as it knows Slurm's.
func buildLayer(ctx context.Context, img Image, tmp string, log io.Writer) error {
	upper, work, merged := filepath.Join(tmp, "root"), filepath.Join(tmp, "work"), filepath.Join(tmp, "merged")
	for _, dir := range []string{upper, work, merged} {
		// upper becomes part of every host's "/", which its users must be able to enter.
		if err := os.Mkdir(dir, 0o755); err != nil { //nolint:gosec // G301: see above.
			return fmt.Errorf("create stand-in layer: %w", err)
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", img.RootFS(), upper, work)
	if err := syscall.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount stand-in layer: %w", err)
	}
	err := installStandIn(ctx, merged, log)
	if uerr := syscall.Unmount(merged, 0); uerr != nil {
		return errors.Join(err, fmt.Errorf("unmount stand-in layer: %w", uerr))
	}
	if err != nil {
		return err
	}
	// The overlay's work directory is its scratch space, useless once unmounted.
	return errors.Join(os.RemoveAll(work), os.Remove(merged))
}

// installStandIn builds the stand-in packages into the repository of the
// image mounted at root, indexes it, and installs them as customize.sh
// installs the lab's own tools: their units stay disabled.
func installStandIn(ctx context.Context, root string, log io.Writer) error {
	repo := filepath.Join(root, RepoDir)
	if err := buildStandIn(ctx, repo, log); err != nil {
		return err
	}
	if err := indexRepo(ctx, root, log); err != nil {
		return err
	}
	script := "set -e; apt-get update -qq; dpkg -i " + RepoDir + "/beegfs-*.deb"
	if err := run(ctx, log, nil, "chroot", root, "/bin/sh", "-c", script); err != nil {
		return fmt.Errorf("install BeeGFS stand-in packages: %w", err)
	}
	return nil
}

func buildInto(ctx context.Context, img Image, log io.Writer) error {
	logf(log, "debootstrap %s into %s (about a minute)\n", img.Release, img.RootFS())
	args := []string{"--variant=minbase", "--include=" + strings.Join(imagePackages, ","), img.Release, img.RootFS(), imageMirror}
	if _, err := os.Stat(filepath.Join(filepath.Dir(debootstrapScript), img.Release)); err != nil {
		args = append(args, debootstrapScript)
	}
	if err := run(ctx, log, nil, "debootstrap", args...); err != nil {
		return err
	}
	if err := writeAptConf(img); err != nil {
		return err
	}
	if err := buildRepo(ctx, img, log); err != nil {
		return err
	}
	if err := run(ctx, log, strings.NewReader(customizeScript), "chroot", img.RootFS(), "/bin/sh", "-s", RepoDir); err != nil {
		return fmt.Errorf("customize image: %w", err)
	}
	if err := run(ctx, log, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpucluster-lab-admin", "-f", img.AdminKeyPath()); err != nil {
		return fmt.Errorf("generate admin key: %w", err)
	}
	password, err := randomPassword()
	if err != nil {
		return err
	}
	if err := os.WriteFile(img.passwordPath(), []byte(password+"\n"), 0o600); err != nil {
		return fmt.Errorf("store admin password: %w", err)
	}
	if err := run(ctx, log, strings.NewReader(adminUser+":"+password+"\n"), "chroot", img.RootFS(), "chpasswd"); err != nil {
		return fmt.Errorf("set admin password: %w", err)
	}
	return installAuthorizedKey(img)
}

// buildRepo downloads the repository's packages inside the image, which
// still has the mirror, and indexes them.
func buildRepo(ctx context.Context, img Image, log io.Writer) error {
	logf(log, "downloading %s and their dependencies into %s\n", strings.Join(repoPackages, ", "), RepoDir)
	args := append([]string{img.RootFS(), "/bin/sh", "-s", RepoDir}, repoPackages...)
	if err := run(ctx, log, strings.NewReader(fetchRepoScript), "chroot", args...); err != nil {
		return fmt.Errorf("fill local repository: %w", err)
	}
	return indexRepo(ctx, img.RootFS(), log)
}

// indexRepo writes the Packages index of the local repository of the image
// at root with the machine's dpkg-scanpackages, so that no indexing tool
// stays installed in the image.
func indexRepo(ctx context.Context, rootfs string, log io.Writer) error {
	var index bytes.Buffer
	cmd := exec.CommandContext(ctx, "dpkg-scanpackages", "--multiversion", ".")
	cmd.Dir = filepath.Join(rootfs, RepoDir)
	cmd.Stdout = &index
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("index local repository: dpkg-scanpackages: %w", err)
	}
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return fmt.Errorf("open image root: %w", err)
	}
	defer func() { _ = root.Close() }() // a directory handle: nothing to flush
	// apt reads the index as its unprivileged _apt user.
	if err := root.WriteFile(filepath.Join(strings.TrimPrefix(RepoDir, "/"), "Packages"), index.Bytes(), 0o644); err != nil { //nolint:gosec // G306: see above.
		return fmt.Errorf("write local repository index: %w", err)
	}
	return nil
}

// hashStandIn feeds every stand-in source file, name and content, into the
// image name, so that a changed stand-in never reuses a stale image.
func hashStandIn(h hash.Hash) {
	// The embedded tree is fixed at compile time: walking it cannot fail.
	_ = fs.WalkDir(beegfsStandIn, standInDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := beegfsStandIn.ReadFile(path)
		h.Write([]byte(path))
		h.Write([]byte{0})
		h.Write(content)
		h.Write([]byte{0})
		return err
	})
}

// buildStandIn builds the BeeGFS stand-in .debs into the local repository,
// before it is indexed, so customize.sh can install them and apt knows them.
func buildStandIn(ctx context.Context, repo string, log io.Writer) error {
	logf(log, "building the BeeGFS stand-in packages %s\n", StandInVersion)
	src, err := os.MkdirTemp("", "gpucluster-lab-standin-")
	if err != nil {
		return fmt.Errorf("create stand-in source directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(src) }() // a scratch copy of embedded files
	tree, err := fs.Sub(beegfsStandIn, standInDir)
	if err != nil {
		return fmt.Errorf("open stand-in source: %w", err)
	}
	if err := os.CopyFS(src, tree); err != nil {
		return fmt.Errorf("copy stand-in source: %w", err)
	}
	binary, err := buildStandInBinary(ctx, src, log)
	if err != nil {
		return err
	}
	if err := run(ctx, log, nil, "sh", filepath.Join(src, "build-debs.sh"), src, repo, StandInVersion, binary); err != nil {
		return fmt.Errorf("build BeeGFS stand-in packages: %w", err)
	}
	return nil
}

// standInModule is the module the stand-in's Go program is built as: on its
// own, from the embedded copy, since it imports only the standard library.
const standInModule = "module gpucluster.invalid/beegfs-standin\n\ngo 1.26\n"

// buildStandInBinary compiles the stand-in's Go program (src/standin) with the
// machine's Go toolchain, static so that it runs in every release's image,
// and returns the binary's path.
func buildStandInBinary(ctx context.Context, src string, log io.Writer) (string, error) {
	dir := filepath.Join(src, "standin")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(standInModule), 0o600); err != nil {
		return "", fmt.Errorf("write stand-in go.mod: %w", err)
	}
	binary := filepath.Join(src, "beegfs-standin")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", binary, ".") //nolint:gosec // G204: the output path is the lab's own scratch directory.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build BeeGFS stand-in program: go build: %w", err)
	}
	return binary, nil
}

// writeAptConf gives the image the apt configuration its release needs (see releaseAptConf).
func writeAptConf(img Image) error {
	conf := releaseAptConf[img.Release]
	if conf == "" {
		return nil
	}
	root, err := os.OpenRoot(img.RootFS())
	if err != nil {
		return fmt.Errorf("open image root: %w", err)
	}
	defer func() { _ = root.Close() }() // a directory handle: nothing to flush
	// apt reads its configuration as its unprivileged _apt user too.
	if err := root.WriteFile(aptConfPath, []byte(conf), 0o644); err != nil { //nolint:gosec // G306: see above.
		return fmt.Errorf("write apt configuration: %w", err)
	}
	return nil
}

func installAuthorizedKey(img Image) error {
	pub, err := os.ReadFile(img.AdminKeyPath() + ".pub")
	if err != nil {
		return fmt.Errorf("read admin public key: %w", err)
	}
	// Through os.Root, so that a symlink in the image cannot send the
	// write to the machine's own files.
	root, err := os.OpenRoot(img.RootFS())
	if err != nil {
		return fmt.Errorf("open image root: %w", err)
	}
	defer func() { _ = root.Close() }() // a directory handle: nothing to flush
	path := filepath.Join("home", adminUser, ".ssh", "authorized_keys")
	if err := root.WriteFile(path, pub, 0o600); err != nil {
		return fmt.Errorf("install admin authorized_keys: %w", err)
	}
	if err := root.Chown(path, adminUID, adminUID); err != nil {
		return fmt.Errorf("chown admin authorized_keys: %w", err)
	}
	return nil
}

func randomPassword() (string, error) {
	buf := make([]byte, 18)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generate admin password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// removeUnmounted deletes dir unless something is still mounted below it:
// debootstrap bind-mounts /dev, /proc and /sys into the target, and removing
// through such a mount would delete the machine's own files.
func removeUnmounted(dir string) error {
	if err := unmountBelow(dir); err != nil {
		return err
	}
	mounts, err := mountsBelow(dir)
	if err != nil {
		return err
	}
	if len(mounts) > 0 {
		return fmt.Errorf("not removing %s: still mounted below it: %s", dir, strings.Join(mounts, ", "))
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// logf writes a progress line. Progress is best effort: a closed terminal
// must not abort bringing the lab up or down half-way.
func logf(log io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(log, format, args...)
}

// run runs a command with its output going to log; stdin may be nil.
func run(ctx context.Context, log io.Writer, stdin io.Reader, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...) //nolint:gosec // G204: runs the lab's own setup commands; no argument comes from outside the program.
	cmd.Stdin = stdin
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// output runs a command and returns its stdout; stderr is included in the error.
func output(ctx context.Context, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...) //nolint:gosec // G204: runs the lab's own setup commands; no argument comes from outside the program.
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
