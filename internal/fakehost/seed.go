package fakehost

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The admin account the provider logs in as, as the lab's hosts have it.
const (
	AdminUser = "admin"
	AdminUID  = 1000
)

// seed lays out a minimal Debian system: the base accounts, the shells, /etc/skel, /home, /tmp
// and a file for each program the fake models, in the directory Debian installs it in.
func seed(h *Host) {
	for _, d := range []string{"/etc", "/etc/skel", "/home", "/root", "/tmp", "/var", "/var/lib", "/usr", "/usr/bin", "/usr/sbin",
		"/usr/local", "/usr/local/bin", "/usr/local/sbin", "/run", "/bin", "/sbin"} {
		must(h.FS.MkdirAll(d, 0o755))
	}
	must(h.FS.Chmod("/tmp", 0o777|fs.ModeSticky))
	must(h.FS.Chmod("/root", 0o700))
	must(h.FS.WriteFile(passwdPath, []byte(strings.Join([]string{
		"root:x:0:0:root:/root:/bin/bash",
		"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
		"bin:x:2:2:bin:/bin:/usr/sbin/nologin",
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
		fmt.Sprintf("%s:x:%d:%d::/home/%s:/bin/bash", AdminUser, AdminUID, AdminUID, AdminUser),
	}, "\n")+"\n"), 0o644))
	must(h.FS.WriteFile(groupPath, []byte(strings.Join([]string{
		"root:x:0:", "daemon:x:1:", "bin:x:2:", "adm:x:4:", "sudo:x:27:" + AdminUser, "users:x:100:", "nogroup:x:65534:",
		fmt.Sprintf("%s:x:%d:", AdminUser, AdminUID),
	}, "\n")+"\n"), 0o644))
	must(h.FS.WriteFile("/etc/shells", []byte("# /etc/shells: valid login shells\n/bin/sh\n/usr/bin/sh\n/bin/bash\n/usr/bin/bash\n/bin/dash\n/usr/bin/dash\n"), 0o644))
	must(h.FS.WriteFile("/etc/skel/.bashrc", []byte("# ~/.bashrc\n"), 0o644))
	must(h.FS.WriteFile("/etc/skel/.profile", []byte("# ~/.profile\n"), 0o644))
	for _, p := range []string{"/bin/sh", "/bin/bash", "/bin/dash", "/usr/bin/sh", "/usr/bin/bash", "/usr/bin/dash", "/usr/sbin/nologin"} {
		must(h.FS.WriteFile(p, []byte("#!fakehost\n"), 0o755))
	}
	names := make([]string, 0, len(h.commands))
	for n := range h.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h.installProgram(n)
	}
	must(h.FS.MkdirAll("/home/"+AdminUser, 0o755))
	must(h.FS.Chown("/home/"+AdminUser, AdminUID, AdminUID))
}

// sbinPrograms are the modelled programs Debian installs in /usr/sbin.
var sbinPrograms = map[string]bool{"useradd": true, "usermod": true, "userdel": true, "groupadd": true, "groupmod": true, "groupdel": true}

// installProgram puts a program's file where Debian has it, unless one is there already.
func (h *Host) installProgram(name string) {
	dir := "/usr/bin"
	if sbinPrograms[name] {
		dir = "/usr/sbin"
	}
	if _, ok := h.lookPath(name); ok {
		return
	}
	must(h.FS.WriteFile(path.Join(dir, name), []byte("#!fakehost\n"), 0o755))
}

// must panics on a failure to build the seed, which is a bug in the fake.
func must(err error) {
	if err != nil {
		panic("fakehost: " + err.Error())
	}
}

// nextTemp numbers mktemp's names.
func (h *Host) nextTemp() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.temps++
	return h.temps
}

// statFormat renders stat -c's format for one file.
func (h *Host) statFormat(format, name string, fi fs.FileInfo) (string, bool) {
	uid, gid := ownerOf(fi)
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'a':
			b.WriteString(strconv.FormatUint(uint64(fi.Mode().Perm()|specialBits(fi.Mode())), 8))
		case 'u':
			b.WriteString(strconv.Itoa(uid))
		case 'g':
			b.WriteString(strconv.Itoa(gid))
		case 'U':
			b.WriteString(h.userName(uid))
		case 'G':
			b.WriteString(h.groupName(gid))
		case 's':
			b.WriteString(strconv.FormatInt(fi.Size(), 10))
		case 'n':
			b.WriteString(name)
		case 'F':
			b.WriteString(fileType(fi.Mode()))
		case '%':
			b.WriteByte('%')
		default:
			return "", false
		}
	}
	return b.String(), true
}

func specialBits(m fs.FileMode) fs.FileMode {
	var out fs.FileMode
	if m&fs.ModeSetuid != 0 {
		out |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		out |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		out |= 0o1000
	}
	return out
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular() && m&fs.ModeType == 0:
		return "regular file"
	}
	return "special file"
}

func (h *Host) userName(uid int) string {
	for _, u := range h.Users() {
		if u.UID == uid {
			return u.Name
		}
	}
	return "UNKNOWN"
}

func (h *Host) groupName(gid int) string {
	for _, g := range h.Groups() {
		if g.GID == gid {
			return g.Name
		}
	}
	return "UNKNOWN"
}
