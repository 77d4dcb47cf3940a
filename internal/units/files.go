package units

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// File is a file as sha256sum and stat see it; only its checksum leaves the host.
type File struct {
	Exists bool
	SHA256 string // hex
	Owner  string
	Group  string
	Mode   fs.FileMode
}

// ReadFile returns path's checksum, owner and mode, from the host's shared read when a package
// shares the file (Share).
func ReadFile(ctx context.Context, ex transport.Executor, path string) (File, error) {
	if !filePath.MatchString(path) {
		return File{}, fmt.Errorf("read %s: not a plain absolute path", path)
	}
	var snap snapshot
	var err error
	if _, sharedFiles := sharedSet(); slices.Contains(sharedFiles, path) {
		snap, err = readShared(ctx, ex)
	} else {
		snap, err = read(ctx, ex, nil, []string{path}, nil)
	}
	if err != nil {
		return File{}, err
	}
	if snap.filesErr != nil {
		return File{}, fmt.Errorf("read %s: %w", path, snap.filesErr)
	}
	return snap.files[path], nil
}

// filePath is what hashFilesFunc's output can carry unescaped: sha256sum escapes a name with a
// backslash or newline, and stat's line is split at spaces.
var filePath = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)

// hashFilesFunc prints the checksum and then the mode, owner, group and name of each of its
// arguments that exists, in two processes for all of them.
//
//go:embed hash_files.sh
var hashFilesFunc string

// parseFiles reads hashfiles' section: a file it says nothing about does not exist.
func parseFiles(list []string, sec transport.Section, answered bool) (map[string]File, error) {
	if !answered {
		return nil, fmt.Errorf("no answer from sha256sum and stat")
	}
	if sec.Status != 0 {
		return nil, fmt.Errorf("sha256sum or stat exited with status %d", sec.Status)
	}
	files := make(map[string]File, len(list))
	for _, line := range sec.Lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && len(f[0]) == 64:
			st := files[f[1]]
			st.SHA256 = f[0]
			files[f[1]] = st
		case len(f) == 4:
			mode, err := strconv.ParseUint(f[0], 8, 32)
			if err != nil {
				return nil, fmt.Errorf("mode %q of %s: %w", f[0], f[3], err)
			}
			st := files[f[3]]
			st.Owner, st.Group, st.Mode = f[1], f[2], fs.FileMode(mode)
			files[f[3]] = st
		default:
			return nil, fmt.Errorf("unexpected sha256sum or stat output %q", line)
		}
	}
	for name, st := range files {
		if !slices.Contains(list, name) || st.SHA256 == "" || st.Owner == "" {
			return nil, fmt.Errorf("sha256sum and stat answered %s incompletely or unasked", name)
		}
		st.Exists = true
		files[name] = st
	}
	return files, nil
}
