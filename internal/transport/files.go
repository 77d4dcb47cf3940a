package transport

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// File is the desired state of a file on a host.
type File struct {
	Path    string
	Content []byte
	// Owner and Group are names or numeric IDs; empty means root.
	Owner, Group string
	// Mode holds permission bits plus setuid, setgid and sticky; zero
	// means 0644.
	Mode fs.FileMode
	// ExpectSHA256, when set, makes the write conditional on the file's current content having
	// this hex SHA-256, or on the file not existing when it is Absent. A writer in another
	// process that got there first makes WriteFile fail with ErrWriteConflict, so separate
	// read-modify-write cycles cannot lose each other's updates.
	ExpectSHA256 string
}

// Absent is the ExpectSHA256 of a file that must not exist yet.
const Absent = "absent"

// ErrWriteConflict reports that a conditional write found other content than expected.
var ErrWriteConflict = errors.New("the file changed since it was read")

var sha256Hex = regexp.MustCompile(`^([0-9a-f]{64}|absent)$`)

// accountName matches user and group names as useradd accepts them, or a
// numeric ID, so owners can reach the shell unquoted in comparisons.
var accountName = regexp.MustCompile(`^([a-z_][a-z0-9_.-]*\$?|[0-9]+)$`)

// ReadFile reads path as root. A missing file is exists=false, not an error. It is never a
// shared read: what it returns is often a secret the caller wipes after use, and a shared copy
// would outlive that.
func (h *Host) ReadFile(ctx context.Context, p string) (content []byte, exists bool, err error) {
	if err := validatePath(p); err != nil {
		return nil, false, err
	}
	// One round trip: a leading flag byte says whether content follows.
	res, err := h.Sudo(ctx, readFileScript(p), nil)
	if err != nil {
		return nil, false, fmt.Errorf("read %s on %s: %w", p, h.cfg.Name, err)
	}
	switch {
	case bytes.HasPrefix(res.Stdout, []byte("y")):
		return res.Stdout[1:], true, nil
	case bytes.Equal(res.Stdout, []byte("n")):
		return nil, false, nil
	default:
		// The output is not quoted: it may be a secret.
		return nil, false, fmt.Errorf("read %s on %s: unexpected output (%d bytes)", p, h.cfg.Name, len(res.Stdout))
	}
}

// WriteFile makes f.Path hold f.Content with f's owner and mode, as root,
// in one round trip. The content goes on stdin into a temp file in the same
// directory; an identical file is left alone (only owner and mode drift is
// repaired), a different one is replaced by rename, so readers never see a
// partial file. changed reports whether anything was modified.
func (h *Host) WriteFile(ctx context.Context, f File) (changed bool, err error) {
	script, err := writeFileScript(f)
	if err != nil {
		return false, err
	}
	res, err := h.Sudo(ctx, script, f.Content)
	if err != nil {
		return false, fmt.Errorf("write %s on %s: %w", f.Path, h.cfg.Name, err)
	}
	switch strings.TrimSpace(string(res.Stdout)) {
	case "changed":
		h.Changed(ctx, "wrote "+f.Path)
		return true, nil
	case "unchanged":
		return false, nil
	case "conflict":
		return false, fmt.Errorf("write %s on %s: %w", f.Path, h.cfg.Name, ErrWriteConflict)
	default:
		return false, fmt.Errorf("write %s on %s: unexpected output %q", f.Path, h.cfg.Name, res.Stdout)
	}
}

// readFileScript answers in one round trip: a leading flag byte says
// whether the file exists and its content follows.
func readFileScript(p string) string {
	return NewScript().Set("p", p).Text(`if [ -e "$p" ]; then printf y; exec cat -- "$p"; fi; printf n`).String()
}

func writeFileScript(f File) (string, error) {
	if err := validatePath(f.Path); err != nil {
		return "", err
	}
	owner, group := defaultString(f.Owner, "root"), defaultString(f.Group, "root")
	for _, name := range []string{owner, group} {
		if !accountName.MatchString(name) {
			return "", fmt.Errorf("write %s: invalid owner or group %q", f.Path, name)
		}
	}
	if f.ExpectSHA256 != "" && !sha256Hex.MatchString(f.ExpectSHA256) {
		return "", fmt.Errorf("write %s: ExpectSHA256 %q is neither a hex SHA-256 nor %q", f.Path, f.ExpectSHA256, Absent)
	}
	mode := fmt.Sprintf("%o", unixMode(f.Mode))
	dir, base := path.Split(f.Path)
	return NewScript().Set("p", f.Path).Set("owner", owner).Set("group", group).Set("mode", mode).
		Set("template", dir+"."+base+".gpucluster.XXXXXX").Set("expect", f.ExpectSHA256).
		Text(writeFileBody).String(), nil
}

// writeFileBody expects p, owner, group, mode and template. stat prints both
// names and IDs so either form of owner compares.
//
//go:embed write_file.sh
var writeFileBody string

// unixMode converts Go's file mode bits to the octal chmod expects.
func unixMode(m fs.FileMode) uint32 {
	if m == 0 {
		return 0o644
	}
	mode := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

func validatePath(p string) error {
	switch {
	case !path.IsAbs(p):
		return fmt.Errorf("path %q is not absolute", p)
	case path.Clean(p) != p || p == "/":
		return fmt.Errorf("path %q is not a clean file path", p)
	case strings.ContainsAny(p, "\x00\n"):
		return errors.New("path contains a NUL or newline")
	}
	return nil
}

func defaultString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
