package fakehost

import (
	"errors"
	"io/fs"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FS is a host's filesystem in memory: regular files, directories and symbolic links, each with
// an owner, a group and a mode. Paths are absolute; a parent directory must exist before
// anything is made in it, as on a real filesystem, so a script that forgets mkdir -p fails.
type FS struct {
	mu    sync.Mutex
	nodes map[string]*node
	// clock gives each change a later modification time than the one before, so "newer than"
	// comparisons are deterministic without reading the wall clock.
	clock time.Time
}

type node struct {
	mode     fs.FileMode // type bits and permissions
	uid, gid uint32
	data     []byte
	target   string // a symbolic link's target
	mtime    time.Time
}

func newFS() *FS {
	f := &FS{nodes: map[string]*node{}, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f.nodes["/"] = &node{mode: fs.ModeDir | 0o755}
	return f
}

func (f *FS) tick() time.Time {
	f.clock = f.clock.Add(time.Second)
	return f.clock
}

// clean makes p absolute against dir and removes . and .. elements.
func clean(dir, p string) string {
	if !strings.HasPrefix(p, "/") {
		p = dir + "/" + p
	}
	return path.Clean(p)
}

// resolve follows symbolic links in every element of p (and in the last one when follow is
// set); the caller holds mu.
func (f *FS) resolve(p string, follow bool) (string, error) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		name := parts[0]
		parts = parts[1:]
		if name == "" {
			continue
		}
		next := path.Join(cur, name)
		n := f.nodes[next]
		if n != nil && n.mode&fs.ModeSymlink != 0 && (len(parts) > 0 || follow) {
			if hops++; hops > 40 {
				return "", syscall.ELOOP
			}
			target := n.target
			if !strings.HasPrefix(target, "/") {
				target = path.Join(cur, target)
			}
			parts = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), parts...)
			cur = "/"
			continue
		}
		if n == nil && len(parts) > 0 {
			return "", fs.ErrNotExist
		}
		if n != nil && len(parts) > 0 && !n.mode.IsDir() {
			return "", syscall.ENOTDIR
		}
		cur = next
	}
	return cur, nil
}

func (f *FS) lookup(p string, follow bool) (string, *node, error) {
	r, err := f.resolve(p, follow)
	if err != nil {
		return "", nil, err
	}
	n := f.nodes[r]
	if n == nil {
		return r, nil, fs.ErrNotExist
	}
	return r, n, nil
}

// parentDir checks that the directory p would live in exists; the caller holds mu.
func (f *FS) parentDir(p string) error {
	_, n, err := f.lookup(path.Dir(p), true)
	if err != nil {
		return err
	}
	if !n.mode.IsDir() {
		return syscall.ENOTDIR
	}
	return nil
}

// ReadFile returns a file's content, following links.
func (f *FS) ReadFile(p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, n, err := f.lookup(p, true)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	if n.mode.IsDir() {
		return nil, pathErr("read", p, syscall.EISDIR)
	}
	return slices.Clone(n.data), nil
}

// WriteFile replaces (or makes) a regular file. A new file is owned by root; an existing one
// keeps its owner, and gets mode perm only when it is new, as open(2) does.
func (f *FS) WriteFile(p string, data []byte, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write(p, data, perm, false)
}

func (f *FS) write(p string, data []byte, perm fs.FileMode, appending bool) error {
	r, n, err := f.lookup(p, true)
	switch {
	case errors.Is(err, fs.ErrNotExist) && r != "":
		if err := f.parentDir(r); err != nil {
			return pathErr("open", p, err)
		}
		f.nodes[r] = &node{mode: perm.Perm(), data: slices.Clone(data), mtime: f.tick()}
		return nil
	case err != nil:
		return pathErr("open", p, err)
	case n.mode.IsDir():
		return pathErr("open", p, syscall.EISDIR)
	}
	if appending {
		n.data = append(n.data, data...)
	} else {
		n.data = slices.Clone(data)
	}
	n.mtime = f.tick()
	return nil
}

// Mkdir makes one directory whose parent exists.
func (f *FS) Mkdir(p string, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mkdir(p, perm)
}

func (f *FS) mkdir(p string, perm fs.FileMode) error {
	if _, _, err := f.lookup(p, false); err == nil {
		return pathErr("mkdir", p, fs.ErrExist)
	}
	if err := f.parentDir(p); err != nil {
		return pathErr("mkdir", p, err)
	}
	r, err := f.resolve(path.Dir(p), true)
	if err != nil {
		return pathErr("mkdir", p, err)
	}
	f.nodes[path.Join(r, path.Base(p))] = &node{mode: fs.ModeDir | perm.Perm(), mtime: f.tick()}
	return nil
}

// MkdirAll makes p and its missing parents.
func (f *FS) MkdirAll(p string, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mkdirAll(p, perm)
}

func (f *FS) mkdirAll(p string, perm fs.FileMode) error {
	if _, n, err := f.lookup(p, true); err == nil {
		if !n.mode.IsDir() {
			return pathErr("mkdir", p, syscall.ENOTDIR)
		}
		return nil
	}
	if parent := path.Dir(p); parent != p {
		if err := f.mkdirAll(parent, perm); err != nil {
			return err
		}
	}
	return f.mkdir(p, perm)
}

// Symlink makes a symbolic link at p pointing to target.
func (f *FS) Symlink(target, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, _, err := f.lookup(p, false); err == nil {
		return pathErr("symlink", p, fs.ErrExist)
	}
	if err := f.parentDir(p); err != nil {
		return pathErr("symlink", p, err)
	}
	f.nodes[p] = &node{mode: fs.ModeSymlink | 0o777, target: target, mtime: f.tick()}
	return nil
}

// Remove removes a file, a link or an empty directory.
func (f *FS) Remove(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, n, err := f.lookup(p, false)
	if err != nil {
		return pathErr("remove", p, err)
	}
	if n.mode.IsDir() && len(f.children(r)) > 0 {
		return pathErr("remove", p, syscall.ENOTEMPTY)
	}
	delete(f.nodes, r)
	return nil
}

// RemoveAll removes p and everything under it; a missing p is no error.
func (f *FS) RemoveAll(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, _, err := f.lookup(p, false)
	if err != nil {
		return nil
	}
	for k := range f.nodes {
		if k == r || strings.HasPrefix(k, r+"/") {
			delete(f.nodes, k)
		}
	}
	return nil
}

// Rename moves from to to, replacing a file at to, as rename(2) does.
func (f *FS) Rename(from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, n, err := f.lookup(from, false)
	if err != nil {
		return pathErr("rename", from, err)
	}
	if err := f.parentDir(to); err != nil {
		return pathErr("rename", to, err)
	}
	dst, err := f.resolve(path.Dir(to), true)
	if err != nil {
		return pathErr("rename", to, err)
	}
	dst = path.Join(dst, path.Base(to))
	if old := f.nodes[dst]; old != nil && old.mode.IsDir() {
		return pathErr("rename", to, syscall.EISDIR)
	}
	moved := map[string]*node{dst: n}
	for k, v := range f.nodes {
		if strings.HasPrefix(k, r+"/") {
			moved[dst+strings.TrimPrefix(k, r)] = v
			delete(f.nodes, k)
		}
	}
	delete(f.nodes, r)
	for k, v := range moved {
		f.nodes[k] = v
	}
	return nil
}

// Link makes a hard link: a second name for the same file, failing on an existing name as
// link(2) does.
func (f *FS) Link(from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, n, err := f.lookup(from, true)
	if err != nil {
		return pathErr("link", from, err)
	}
	if _, _, err := f.lookup(to, false); err == nil {
		return pathErr("link", to, fs.ErrExist)
	}
	if err := f.parentDir(to); err != nil {
		return pathErr("link", to, err)
	}
	f.nodes[path.Clean(to)] = n
	return nil
}

// Chmod sets a file's permission bits, following links.
func (f *FS) Chmod(p string, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, n, err := f.lookup(p, true)
	if err != nil {
		return pathErr("chmod", p, err)
	}
	n.mode = n.mode.Type() | perm&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	return nil
}

// Chown sets a file's owner and group; -1 leaves one as it is.
func (f *FS) Chown(p string, uid, gid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, n, err := f.lookup(p, true)
	if err != nil {
		return pathErr("chown", p, err)
	}
	if uid >= 0 && uid <= math.MaxUint32 {
		n.uid = uint32(uid)
	}
	if gid >= 0 && gid <= math.MaxUint32 {
		n.gid = uint32(gid)
	}
	return nil
}

// Stat describes p, following a final link when follow is set.
func (f *FS) Stat(p string, follow bool) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, n, err := f.lookup(p, follow)
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return info(path.Base(p), n), nil
}

// ReadDir lists a directory's entries, sorted by name.
func (f *FS) ReadDir(p string) ([]fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, n, err := f.lookup(p, true)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	if !n.mode.IsDir() {
		return nil, pathErr("readdir", p, syscall.ENOTDIR)
	}
	var out []fs.FileInfo
	for _, c := range f.children(r) {
		out = append(out, info(path.Base(c), f.nodes[c]))
	}
	return out, nil
}

// children are the direct entries of directory r, sorted; the caller holds mu.
func (f *FS) children(r string) []string {
	prefix := strings.TrimSuffix(r, "/") + "/"
	var out []string
	for k := range f.nodes {
		if k != "/" && strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], "/") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Paths lists every path under root (root included), sorted, for tests that compare trees.
func (f *FS) Paths(root string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.nodes {
		if k == root || strings.HasPrefix(k, strings.TrimSuffix(root, "/")+"/") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func pathErr(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// fileInfo is what Stat returns; Sys is a *syscall.Stat_t so the shell's -O and -G tests and
// stat's owner fields work.
type fileInfo struct {
	name string
	n    node
}

func info(name string, n *node) fileInfo { return fileInfo{name: name, n: *n} }

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return int64(len(i.n.data)) }
func (i fileInfo) Mode() fs.FileMode  { return i.n.mode }
func (i fileInfo) ModTime() time.Time { return i.n.mtime }
func (i fileInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i fileInfo) Sys() any {
	return &syscall.Stat_t{Uid: i.n.uid, Gid: i.n.gid, Size: int64(len(i.n.data))}
}

// ownerOf returns the uid and gid of a file the FS described.
func ownerOf(fi fs.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return 0, 0
}

// Owner returns the uid and gid of p (not following a final link).
func (f *FS) Owner(p string) (uid, gid int) {
	fi, err := f.Stat(p, false)
	if err != nil {
		return -1, -1
	}
	return ownerOf(fi)
}
