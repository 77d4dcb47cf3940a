package fakehost

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// coreCommands are the coreutils, grep and sh, as far as the provider's scripts use them.
func coreCommands() map[string]Command {
	return map[string]Command{
		"sh": sh, "dash": sh,
		"cat": cat, "cut": cut, "grep": grep, "head": head, "tr": tr, "wc": wc, "sort": sortCmd,
		"mkdir": mkdir, "rmdir": rmdir, "rm": rm, "mv": mv, "cp": cp, "ln": ln, "touch": touch,
		"chmod": chmod, "chown": chown, "install": install, "mktemp": mktemp,
		"dirname": dirname, "basename": basename, "readlink": readlink, "stat": stat,
		"sha256sum": sha256sum, "cmp": cmp, "flock": flock,
		"fakehost-umask": umask, "fakehost-command-v": commandV,
	}
}

func sh(c *Call) int {
	f, rest, ok := getopt(c, c.Args[1:], "eu", "c", nil, false)
	if !ok {
		return 127
	}
	if !f.has('c') {
		return c.NotModelled("sh without -c")
	}
	script := f['c']
	if f.has('e') {
		script = "set -e\n" + script
	}
	if f.has('u') {
		script = "set -u\n" + script
	}
	// sh -c SCRIPT NAME ARGS...: NAME is $0, ARGS the positional parameters.
	var params []string
	if len(rest) > 1 {
		params = rest[1:]
	}
	return c.Sub(script, params, c.Stdin, c.Stdout, c.Stderr)
}

// inputs reads each operand ("-" or none is stdin) in turn.
func inputs(c *Call, operands []string, each func(name string, data []byte) int) int {
	if len(operands) == 0 {
		operands = []string{"-"}
	}
	status := 0
	for _, o := range operands {
		var data []byte
		var err error
		if o == "-" {
			data, err = io.ReadAll(c.Stdin)
		} else {
			data, err = c.Host.FS.ReadFile(c.Path(o))
		}
		if err != nil {
			status = errStatus(c, err)
			continue
		}
		if s := each(o, data); s != 0 {
			status = s
		}
	}
	return status
}

func cat(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok {
		return 127
	}
	return inputs(c, operands, func(_ string, data []byte) int { _, _ = c.Stdout.Write(data); return 0 })
}

// lines splits data into lines without their newlines; a final line without one counts.
func lines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" && len(data) == 0 {
		return nil
	}
	return strings.Split(s, "\n")
}

func cut(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "", "df", nil)
	if !ok {
		return 127
	}
	if !f.has('f') {
		return c.NotModelled("cut without -f")
	}
	delim := "\t"
	if f.has('d') {
		delim = f['d']
	}
	fields, err := fieldList(f['f'])
	if err != nil {
		return c.Errorf(1, "%v", err)
	}
	return inputs(c, operands, func(_ string, data []byte) int {
		for _, line := range lines(data) {
			parts := strings.Split(line, delim)
			if len(parts) == 1 {
				c.Println(line)
				continue
			}
			var out []string
			for i, p := range parts {
				if fields(i + 1) {
					out = append(out, p)
				}
			}
			c.Println(strings.Join(out, delim))
		}
		return 0
	})
}

// fieldList parses cut's LIST: numbers and ranges (N, N-M, N-, -M) separated by commas.
func fieldList(list string) (func(int) bool, error) {
	type span struct{ lo, hi int }
	var spans []span
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		s := span{1, 1 << 30}
		var err error
		if lo != "" {
			if s.lo, err = strconv.Atoi(lo); err != nil {
				return nil, fmt.Errorf("invalid field list %q", list)
			}
		}
		switch {
		case !isRange:
			s.hi = s.lo
		case hi != "":
			if s.hi, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("invalid field list %q", list)
			}
		}
		spans = append(spans, s)
	}
	return func(n int) bool {
		for _, s := range spans {
			if n >= s.lo && n <= s.hi {
				return true
			}
		}
		return false
	}, nil
}

func grep(c *Call) int {
	f, rest, ok := parseFlags(c, c.Args[1:], "qxFvcE", "e", nil)
	if !ok {
		return 127
	}
	pattern := f['e']
	if !f.has('e') {
		if len(rest) == 0 {
			return c.Errorf(2, "no pattern")
		}
		pattern, rest = rest[0], rest[1:]
	}
	if !f.has('E') && !f.has('F') {
		pattern = breToERE(pattern)
	}
	match, err := grepMatcher(pattern, f.has('F'), f.has('x'))
	if err != nil {
		return c.Errorf(2, "%v", err)
	}
	// With more than one file, each line and count is prefixed with its file's name.
	prefix := func(name string) string {
		if len(rest) > 1 {
			return name + ":"
		}
		return ""
	}
	found := 0
	status := inputs(c, rest, func(name string, data []byte) int {
		count := 0
		for _, line := range lines(data) {
			if match(line) == f.has('v') {
				continue
			}
			count++
			if !f.has('q') && !f.has('c') {
				c.Println(prefix(name) + line)
			}
		}
		if f.has('c') && !f.has('q') {
			c.Printf("%s%d\n", prefix(name), count)
		}
		found += count
		return 0
	})
	switch {
	case status != 0:
		return 2
	case found == 0:
		return 1
	}
	return 0
}

// breToERE turns a basic regular expression into an extended one: in a BRE the characters
// ( ) { } | + ? are literal, and GNU's \( \) \{ \} \| \+ \? are the operators.
func breToERE(bre string) string {
	const ops = "(){}|+?"
	var b strings.Builder
	for i := 0; i < len(bre); i++ {
		switch ch := bre[i]; {
		case ch == '\\' && i+1 < len(bre) && strings.IndexByte(ops, bre[i+1]) >= 0:
			i++
			b.WriteByte(bre[i])
		case ch == '\\' && i+1 < len(bre):
			i++
			b.WriteByte(ch)
			b.WriteByte(bre[i])
		case strings.IndexByte(ops, ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// grepMatcher matches a line against a basic or extended regular expression the way grep
// does, as far as Go's RE2 syntax agrees with it, or a fixed string.
func grepMatcher(pattern string, fixed, whole bool) (func(string) bool, error) {
	if fixed {
		if whole {
			return func(l string) bool { return l == pattern }, nil
		}
		return func(l string) bool { return strings.Contains(l, pattern) }, nil
	}
	if whole {
		pattern = "^(?:" + pattern + ")$"
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

func head(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "", "nc", nil)
	if !ok {
		return 127
	}
	return inputs(c, operands, func(_ string, data []byte) int {
		if f.has('c') {
			n, _ := strconv.Atoi(f['c'])
			_, _ = c.Stdout.Write(data[:min(n, len(data))])
			return 0
		}
		n := 10
		if f.has('n') {
			n, _ = strconv.Atoi(f['n'])
		}
		for i, l := range lines(data) {
			if i >= n {
				break
			}
			c.Println(l)
		}
		return 0
	})
}

func tr(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "d", "", nil)
	if !ok {
		return 127
	}
	data, _ := io.ReadAll(c.Stdin)
	switch {
	case f.has('d') && len(operands) == 1:
		set := expandTrSet(operands[0])
		_, _ = c.Stdout.Write(bytes.Map(func(r rune) rune {
			if strings.ContainsRune(set, r) {
				return -1
			}
			return r
		}, data))
	case !f.has('d') && len(operands) == 2:
		from, to := expandTrSet(operands[0]), expandTrSet(operands[1])
		_, _ = c.Stdout.Write(bytes.Map(func(r rune) rune {
			if i := strings.IndexRune(from, r); i >= 0 {
				return rune(to[min(i, len(to)-1)])
			}
			return r
		}, data))
	default:
		return c.NotModelled("this form of tr")
	}
	return 0
}

func expandTrSet(s string) string {
	s = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i+2 < len(s) && s[i+1] == '-' {
			for r := s[i]; r <= s[i+2]; r++ {
				b.WriteByte(r)
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func wc(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "lc", "", nil)
	if !ok {
		return 127
	}
	if len(operands) > 0 || f.has('l') == f.has('c') {
		return c.NotModelled("this form of wc")
	}
	data, _ := io.ReadAll(c.Stdin)
	if f.has('l') {
		c.Println(bytes.Count(data, []byte("\n")))
	} else {
		c.Println(len(data))
	}
	return 0
}

func sortCmd(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "u", "", nil)
	if !ok {
		return 127
	}
	var all []string
	status := inputs(c, operands, func(_ string, data []byte) int { all = append(all, lines(data)...); return 0 })
	slices.Sort(all)
	if f.has('u') {
		all = slices.Compact(all)
	}
	for _, l := range all {
		c.Println(l)
	}
	return status
}

func mkdir(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "p", "m", map[string]byte{"--parents": 'p', "--mode": 'm'})
	if !ok {
		return 127
	}
	perm := fs.FileMode(0o777) &^ c.Umask()
	if f.has('m') {
		m, err := strconv.ParseUint(f['m'], 8, 32)
		if err != nil {
			return c.NotModelled("mkdir -m " + f['m'])
		}
		perm = fs.FileMode(m)
	}
	status := 0
	for _, o := range operands {
		var err error
		if f.has('p') {
			err = c.Host.FS.MkdirAll(c.Path(o), perm)
		} else {
			err = c.Host.FS.Mkdir(c.Path(o), perm)
		}
		if err == nil && f.has('m') {
			err = c.Host.FS.Chmod(c.Path(o), perm)
		}
		if err != nil {
			status = errStatus(c, err)
		}
	}
	return status
}

func rmdir(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok {
		return 127
	}
	status := 0
	for _, o := range operands {
		fi, err := c.Host.FS.Stat(c.Path(o), false)
		if err == nil && !fi.IsDir() {
			err = pathErr("rmdir", o, syscall.ENOTDIR)
		}
		if err == nil {
			err = c.Host.FS.Remove(c.Path(o))
		}
		if err != nil {
			status = errStatus(c, err)
		}
	}
	return status
}

func rm(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "frR", "", map[string]byte{"--force": 'f', "--recursive": 'r'})
	if !ok {
		return 127
	}
	status := 0
	for _, o := range operands {
		p := c.Path(o)
		fi, err := c.Host.FS.Stat(p, false)
		switch {
		case err != nil && f.has('f'):
			continue
		case err != nil:
			status = errStatus(c, err)
		case fi.IsDir() && !f.has('r') && !f.has('R'):
			status = c.Errorf(1, "cannot remove '%s': Is a directory", o)
		case fi.IsDir():
			_ = c.Host.FS.RemoveAll(p)
		default:
			if err := c.Host.FS.Remove(p); err != nil {
				status = errStatus(c, err)
			}
		}
	}
	return status
}

func mv(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "fT", "", map[string]byte{"--force": 'f', "--no-target-directory": 'T'})
	if !ok {
		return 127
	}
	if len(operands) != 2 {
		return c.NotModelled("mv with other than two operands")
	}
	from, to := c.Path(operands[0]), c.Path(operands[1])
	if fi, err := c.Host.FS.Stat(to, true); err == nil && fi.IsDir() {
		to = path.Join(to, path.Base(from))
	}
	if err := c.Host.FS.Rename(from, to); err != nil {
		return errStatus(c, err)
	}
	return 0
}

// cp copies regular files, and with -a or -r a tree; -a and -p keep modes and owners.
func cp(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "afprRT", "", nil)
	if !ok {
		return 127
	}
	if len(operands) != 2 {
		return c.NotModelled("cp with other than two operands")
	}
	from, to := c.Path(operands[0]), c.Path(operands[1])
	keep := f.has('a') || f.has('p')
	recursive := f.has('a') || f.has('r') || f.has('R')
	fi, err := c.Host.FS.Stat(from, true)
	if err != nil {
		return errStatus(c, err)
	}
	if !fi.IsDir() {
		if ti, err := c.Host.FS.Stat(to, true); err == nil && ti.IsDir() {
			to = path.Join(to, path.Base(from))
		}
		return copyFile(c, from, to, keep)
	}
	if !recursive {
		return c.Errorf(1, "-r not specified; omitting directory '%s'", operands[0])
	}
	// "cp -a SRC/. DST/" copies SRC's content into DST; "cp -a SRC DST" with DST a
	// directory copies SRC into it.
	if path.Base(operands[0]) != "." {
		if ti, err := c.Host.FS.Stat(to, true); err == nil && ti.IsDir() {
			to = path.Join(to, path.Base(from))
		}
	}
	return copyTree(c, from, to, keep)
}

func copyFile(c *Call, from, to string, keep bool) int {
	data, err := c.Host.FS.ReadFile(from)
	if err == nil {
		err = c.Host.FS.WriteFile(to, data, 0o666&^c.Umask())
	}
	if err == nil && keep {
		err = copyAttrs(c.Host.FS, from, to)
	}
	if err != nil {
		return errStatus(c, err)
	}
	return 0
}

func copyAttrs(fsys *FS, from, to string) error {
	fi, err := fsys.Stat(from, true)
	if err != nil {
		return err
	}
	uid, gid := ownerOf(fi)
	if err := fsys.Chmod(to, fi.Mode().Perm()); err != nil {
		return err
	}
	return fsys.Chown(to, uid, gid)
}

func copyTree(c *Call, from, to string, keep bool) int {
	if _, err := c.Host.FS.Stat(to, true); err != nil {
		if err := c.Host.FS.Mkdir(to, 0o777&^c.Umask()); err != nil {
			return errStatus(c, err)
		}
	}
	if keep {
		if err := copyAttrs(c.Host.FS, from, to); err != nil {
			return errStatus(c, err)
		}
	}
	entries, err := c.Host.FS.ReadDir(from)
	if err != nil {
		return errStatus(c, err)
	}
	for _, e := range entries {
		src, dst := path.Join(from, e.Name()), path.Join(to, e.Name())
		var s int
		if e.IsDir() {
			s = copyTree(c, src, dst, keep)
		} else {
			s = copyFile(c, src, dst, keep)
		}
		if s != 0 {
			return s
		}
	}
	return 0
}

func ln(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "sfnT", "", nil)
	if !ok {
		return 127
	}
	if len(operands) != 2 {
		return c.NotModelled("ln with other than two operands")
	}
	target, name := operands[0], c.Path(operands[1])
	if f.has('f') {
		_ = c.Host.FS.Remove(name)
	}
	var err error
	if f.has('s') {
		err = c.Host.FS.Symlink(target, name)
	} else {
		err = c.Host.FS.Link(c.Path(target), name)
	}
	if err != nil {
		return errStatus(c, err)
	}
	return 0
}

func touch(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok {
		return 127
	}
	for _, o := range operands {
		p := c.Path(o)
		data, err := c.Host.FS.ReadFile(p)
		if err != nil {
			data = nil
		}
		if err := c.Host.FS.WriteFile(p, data, 0o666&^c.Umask()); err != nil {
			return errStatus(c, err)
		}
	}
	return 0
}

func chmod(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "R", "", nil)
	if !ok {
		return 127
	}
	if len(operands) < 2 {
		return c.Errorf(1, "missing operand")
	}
	m, err := strconv.ParseUint(operands[0], 8, 32)
	if err != nil {
		return c.NotModelled("symbolic mode " + operands[0])
	}
	perm := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		perm |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		perm |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		perm |= fs.ModeSticky
	}
	return eachPath(c, operands[1:], f.has('R'), func(p string) error { return c.Host.FS.Chmod(p, perm) })
}

func chown(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "Rh", "", nil)
	if !ok {
		return 127
	}
	if len(operands) < 2 {
		return c.Errorf(1, "missing operand")
	}
	uid, gid, err := c.Host.owner(operands[0])
	if err != nil {
		return c.Errorf(1, "%v", err)
	}
	return eachPath(c, operands[1:], f.has('R'), func(p string) error { return c.Host.FS.Chown(p, uid, gid) })
}

// eachPath applies change to each operand, and with recursive to everything under it.
func eachPath(c *Call, operands []string, recursive bool, change func(string) error) int {
	status := 0
	for _, o := range operands {
		paths := []string{c.Path(o)}
		if recursive {
			paths = c.Host.FS.Paths(c.Path(o))
		}
		if len(paths) == 0 {
			paths = []string{c.Path(o)}
		}
		for _, p := range paths {
			if err := change(p); err != nil {
				status = errStatus(c, err)
			}
		}
	}
	return status
}

// install copies a file (or with -d makes directories) and sets mode, owner and group.
func install(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "dDT", "mog", nil)
	if !ok {
		return 127
	}
	perm := fs.FileMode(0o755)
	if f.has('m') {
		m, err := strconv.ParseUint(f['m'], 8, 32)
		if err != nil {
			return c.NotModelled("install -m " + f['m'])
		}
		perm = fs.FileMode(m)
	}
	uid, gid, err := c.Host.owner(f['o'] + ":" + f['g'])
	if err != nil {
		return c.Errorf(1, "%v", err)
	}
	finish := func(p string) int {
		if err := c.Host.FS.Chmod(p, perm); err != nil {
			return errStatus(c, err)
		}
		if err := c.Host.FS.Chown(p, uid, gid); err != nil {
			return errStatus(c, err)
		}
		return 0
	}
	if f.has('d') {
		for _, o := range operands {
			if err := c.Host.FS.MkdirAll(c.Path(o), 0o755); err != nil {
				return errStatus(c, err)
			}
			if s := finish(c.Path(o)); s != 0 {
				return s
			}
		}
		return 0
	}
	if len(operands) != 2 {
		return c.NotModelled("install with other than two operands")
	}
	var data []byte
	if operands[0] == "/dev/stdin" {
		data, err = io.ReadAll(c.Stdin)
	} else {
		data, err = c.Host.FS.ReadFile(c.Path(operands[0]))
	}
	if err != nil {
		return errStatus(c, err)
	}
	to := c.Path(operands[1])
	if f.has('D') {
		if err := c.Host.FS.MkdirAll(path.Dir(to), 0o755); err != nil {
			return errStatus(c, err)
		}
	}
	// install unlinks the destination and writes a new file.
	_ = c.Host.FS.Remove(to)
	if err := c.Host.FS.WriteFile(to, data, perm); err != nil {
		return errStatus(c, err)
	}
	return finish(to)
}

// mktemp makes a file (or with -d a directory) from a template ending in X's, mode 0600
// (0700). The names count up, so a run is reproducible.
func mktemp(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "dq", "p", nil)
	if !ok {
		return 127
	}
	template := "/tmp/tmp.XXXXXXXXXX"
	if len(operands) == 1 {
		template = operands[0]
		if !strings.Contains(template, "/") {
			dir := "/tmp"
			if f.has('p') {
				dir = f['p']
			}
			template = path.Join(dir, template)
		}
	}
	stem := strings.TrimRight(template, "X")
	width := len(template) - len(stem)
	if width < 3 {
		return c.Errorf(1, "too few X's in template '%s'", template)
	}
	for {
		name := c.Path(stem + fmt.Sprintf("%0*d", width, c.Host.nextTemp()))
		var err error
		if f.has('d') {
			err = c.Host.FS.Mkdir(name, 0o700)
		} else {
			c.Host.FS.mu.Lock()
			if _, _, lerr := c.Host.FS.lookup(name, false); lerr == nil {
				err = fs.ErrExist
			} else {
				err = c.Host.FS.write(name, nil, 0o600, false)
			}
			c.Host.FS.mu.Unlock()
		}
		switch {
		case err == nil:
			c.Println(name)
			return 0
		case !errors.Is(err, fs.ErrExist):
			return errStatus(c, err)
		}
	}
}

func dirname(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok {
		return 127
	}
	for _, o := range operands {
		c.Println(path.Dir(strings.TrimRight(o, "/") + map[bool]string{true: "/", false: ""}[o == "/"]))
	}
	return 0
}

func basename(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok || len(operands) == 0 {
		return 127
	}
	b := path.Base(operands[0])
	if len(operands) == 2 {
		b = strings.TrimSuffix(b, operands[1])
	}
	c.Println(b)
	return 0
}

func readlink(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "fen", "", nil)
	if !ok || len(operands) != 1 {
		return 127
	}
	p := c.Path(operands[0])
	if f.has('f') || f.has('e') {
		c.Host.FS.mu.Lock()
		r, err := c.Host.FS.resolve(p, true)
		if err == nil && f.has('e') {
			_, _, err = c.Host.FS.lookup(r, false)
		}
		c.Host.FS.mu.Unlock()
		if err != nil {
			return 1
		}
		c.Println(r)
		return 0
	}
	c.Host.FS.mu.Lock()
	_, n, err := c.Host.FS.lookup(p, false)
	c.Host.FS.mu.Unlock()
	if err != nil || n.mode&fs.ModeSymlink == 0 {
		return 1
	}
	c.Println(n.target)
	return 0
}

// stat supports -c with the formats the provider reads: %a %u %g %U %G %s %n %F.
func stat(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "L", "c", nil)
	if !ok {
		return 127
	}
	if !f.has('c') {
		return c.NotModelled("stat without -c")
	}
	status := 0
	for _, o := range operands {
		fi, err := c.Host.FS.Stat(c.Path(o), f.has('L'))
		if err != nil {
			status = c.Errorf(1, "cannot statx '%s': %s", o, describe(err))
			continue
		}
		out, ok := c.Host.statFormat(f['c'], o, fi)
		if !ok {
			return c.NotModelled("stat format " + f['c'])
		}
		c.Println(out)
	}
	return status
}

func sha256sum(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "", "", nil)
	if !ok {
		return 127
	}
	return inputs(c, operands, func(name string, data []byte) int {
		sum := sha256.Sum256(data)
		c.Printf("%s  %s\n", hex.EncodeToString(sum[:]), name)
		return 0
	})
}

func cmp(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "s", "", nil)
	if !ok || len(operands) != 2 {
		return 127
	}
	var data [2][]byte
	for i, o := range operands {
		var err error
		if o == "-" {
			data[i], err = io.ReadAll(c.Stdin)
		} else {
			data[i], err = c.Host.FS.ReadFile(c.Path(o))
		}
		if err != nil {
			if !f.has('s') {
				errStatus(c, err)
			}
			return 2
		}
	}
	if bytes.Equal(data[0], data[1]) {
		return 0
	}
	if !f.has('s') {
		c.Printf("%s %s differ\n", operands[0], operands[1])
	}
	return 1
}

func umask(c *Call) int {
	st, ok := c.ctx.Value(runKey{}).(*runState)
	if !ok {
		return c.NotModelled("umask outside a script")
	}
	if len(c.Args) == 1 {
		c.Printf("%04o\n", uint32(st.umask))
		return 0
	}
	m, err := strconv.ParseUint(c.Args[1], 8, 32)
	if err != nil || len(c.Args) > 2 {
		return c.NotModelled("umask " + strings.Join(c.Args[1:], " "))
	}
	st.umask = fs.FileMode(m)
	return 0
}

// commandV finds a command as `command -v` does: a builtin or function by its name is not
// looked for (the provider's scripts ask only about programs), a program on PATH in the
// host's files, or one the host has a handler for under /usr/bin.
func commandV(c *Call) int {
	status := 0
	for _, name := range c.Args[1:] {
		if p, ok := c.Host.lookPath(name); ok {
			c.Println(p)
		} else {
			status = 1
		}
	}
	return status
}

func (h *Host) lookPath(name string) (string, bool) {
	if strings.Contains(name, "/") {
		fi, err := h.FS.Stat(name, true)
		return name, err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	for _, dir := range strings.Split(hostPath, ":") {
		p := path.Join(dir, name)
		if fi, err := h.FS.Stat(p, true); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// flock on a descriptor always gets the lock: a fake host runs one script at a time.
func flock(c *Call) int {
	_, operands, ok := parseFlags(c, c.Args[1:], "nxs", "w", nil)
	if !ok {
		return 127
	}
	if len(operands) != 1 || strings.Trim(operands[0], "0123456789") != "" {
		return c.NotModelled("flock on a file")
	}
	return 0
}

// awkSections is the one awk program the fake runs, as awk receives it.
var awkSections = transport.AwkSections

// sectionMark starts every section header, as awkSections prints it.
var sectionMark = strings.Fields(awkSectionFormat)[0]

// awkSectionFormat is the printf format of awkSections' section header and body.
var awkSectionFormat = regexp.MustCompile(`printf "([^"]*)", length\(b\), key, b`).FindStringSubmatch(awkSections)[1]

// awk runs one program: transport.AwkSections, which prints each file it reads as a section
// keyed by the k=KEY operand before it. Any other program is not modelled.
func awk(c *Call) int {
	if len(c.Args) < 2 || c.Args[1] != awkSections {
		return c.NotModelled("awk program")
	}
	key := ""
	for _, a := range c.Args[2:] {
		if k, ok := strings.CutPrefix(a, "k="); ok {
			key = k
			continue
		}
		data, err := c.Host.FS.ReadFile(c.Path(a))
		if err != nil {
			_, _ = fmt.Fprintf(c.Stderr, "awk: cannot open \"%s\" (%s)\n", a, describe(err))
			return 2
		}
		var b strings.Builder
		for _, l := range lines(data) {
			b.WriteString(l + "\n")
		}
		if b.Len() == 0 {
			continue
		}
		c.Printf("%s", awkPrintf(awkSectionFormat, b.Len(), key, b.String()))
	}
	return 0
}

// awkPrintf formats as awk's printf does for the escapes \n and \t and the conversions %d and
// %s, the ones awkSections uses.
func awkPrintf(format string, args ...any) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		switch {
		case format[i] == '\\' && i+1 < len(format):
			i++
			b.WriteString(map[byte]string{'n': "\n", 't': "\t", '\\': "\\"}[format[i]])
		case format[i] == '%' && i+1 < len(format) && len(args) > 0:
			i++
			_, _ = fmt.Fprint(&b, args[0])
			args = args[1:]
		default:
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// sed models `sed -n 's/RE/REPLACEMENT/p' [FILE]`, one substitution with a basic expression,
// printing the lines it changed.
func sed(c *Call) int {
	f, operands, ok := parseFlags(c, c.Args[1:], "n", "", nil)
	if !ok {
		return 127
	}
	if !f.has('n') || len(operands) == 0 {
		return c.NotModelled("sed without -n")
	}
	m := regexp.MustCompile(`^s/((?:[^/\\]|\\.)*)/((?:[^/\\]|\\.)*)/p$`).FindStringSubmatch(operands[0])
	if m == nil || strings.ContainsAny(m[2], `\&`) {
		return c.NotModelled("sed expression " + operands[0])
	}
	re, err := regexp.Compile(breToERE(m[1]))
	if err != nil {
		return c.Errorf(1, "-e expression #1: %v", err)
	}
	return inputs(c, operands[1:], func(_ string, data []byte) int {
		for _, l := range lines(data) {
			if loc := re.FindStringIndex(l); loc != nil {
				c.Println(l[:loc[0]] + m[2] + l[loc[1]:])
			}
		}
		return 0
	})
}
