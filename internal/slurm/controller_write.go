package slurm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// writeAttempts bounds the retries of a write whose conditional write found that another
// process (another Terraform run) changed the files first.
const writeAttempts = 3

// fragmentName matches the names ParseFragments accepts, so a name read from
// the host or given by a caller is safe in a path.
var fragmentName = regexp.MustCompile(`^(controller|accounting|(node|partition)-[A-Za-z0-9][A-Za-z0-9_.-]*)\.conf$`)

// WriteFragments puts or removes fragments on the controller under the host's lock and
// changes nothing else: slurm.conf, cgroup.conf, gres.conf and the daemons wait for
// Activate, so however many fragments one apply changes, the daemons are touched once.
// The fragments on the controller, written but not yet activated, are the record that an
// activation is pending: an apply that ends before it leaves them for the next plan to
// show. Only a set of fragments that does not parse is refused (*RefusedError): what they
// assemble to is Activate's to check, as one apply passes through incomplete sets (a node
// removed before the partition that lists it is updated). Writes are conditional on the
// content read, so a second process changing a fragment at the same time makes the write
// start over rather than lose that change.
//
// While FragmentDir holds no fragment but slurm.conf exists (a cluster built by hand), the
// fragments are those AdoptFiles reads from the files, and the first write puts all of them
// on disk with the changes, so what Slurm runs with changes by the changes only.
func WriteFragments(ctx context.Context, h ControllerHost, changes ...Fragment) error {
	if err := checkFragmentNames(changes); err != nil {
		return &RefusedError{Err: err}
	}
	unlock, err := h.Lock(ctx)
	if err != nil {
		return fmt.Errorf("slurm fragments: %w", err)
	}
	defer unlock()
	for attempt := 1; ; attempt++ {
		current, onDisk, err := readFragments(ctx, h)
		var adopt *AdoptError
		if errors.As(err, &adopt) {
			return &RefusedError{Err: err}
		}
		if err != nil {
			return err
		}
		next := withChanges(current, changes)
		if _, err := ParseFragments(next); err != nil {
			return &RefusedError{Err: err}
		}
		err = writeFragments(ctx, h, onDisk, next)
		if !errors.Is(err, transport.ErrWriteConflict) || attempt == writeAttempts {
			return err
		}
	}
}

func checkFragmentNames(changes []Fragment) error {
	for _, c := range changes {
		if !fragmentName.MatchString(c.File) {
			return fmt.Errorf("fragment name %q is not one this provider writes", c.File)
		}
	}
	return nil
}

func withChanges(current map[string][]byte, changes []Fragment) map[string][]byte {
	next := make(map[string][]byte, len(current)+len(changes))
	for k, v := range current {
		next[k] = v
	}
	for _, c := range changes {
		if c.Content == nil {
			delete(next, c.File)
		} else {
			next[c.File] = c.Content
		}
	}
	return next
}

// writeFragments makes FragmentDir hold next, given it held current. Each write expects the
// fragment as current has it, so a fragment another process changed since the read ends in
// ErrWriteConflict.
func writeFragments(ctx context.Context, h ControllerHost, current, next map[string][]byte) error {
	if sameFragments(current, next) {
		return nil
	}
	var remove []string
	for name := range current {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
		}
	}
	script := transport.ScriptEnv + "mkdir -p -m 0755 -- " + transport.Quote(FragmentDir)
	for _, name := range remove {
		script += " && rm -f -- " + transport.Quote(FragmentDir+"/"+name)
	}
	if _, err := h.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("update %s: %w", FragmentDir, err)
	}
	for _, name := range remove {
		transport.Changed(ctx, h, "removed "+FragmentDir+"/"+name)
	}
	for name, content := range next {
		old, ok := current[name]
		if ok && bytes.Equal(old, content) {
			continue
		}
		f := configFile(FragmentDir+"/"+name, content)
		f.ExpectSHA256 = expectedSHA256(old, ok)
		if _, err := h.WriteFile(ctx, f); err != nil {
			return fmt.Errorf("write fragment: %w", err)
		}
	}
	return nil
}

// expectedSHA256 is the ExpectSHA256 of a file read as content, or found
// missing.
func expectedSHA256(content []byte, exists bool) string {
	if !exists {
		return transport.Absent
	}
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

func sameFragments(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, content := range a {
		if other, ok := b[name]; !ok || !bytes.Equal(content, other) {
			return false
		}
	}
	return true
}

// configFile is a file slurmctld and every user must be able to read;
// slurm.conf(5) asks for world-readable files.
func configFile(path string, content []byte) transport.File {
	return transport.File{Path: path, Content: content, Owner: "root", Group: "root", Mode: 0o644}
}

// contents are the files in the order of confFiles.
func (f Files) contents() [][]byte {
	return [][]byte{f.SlurmConf, f.CgroupConf, f.GresConf, f.Prolog, f.Epilog}
}

// writeFiles writes the files, or removes one whose content is nil (a job script unset, a
// rollback to a controller that had none). With expect set, each write is conditional on
// the file still holding what expect has, and a file absent from both is left alone.
func writeFiles(ctx context.Context, h ControllerHost, f Files, expect *Files) error {
	contents := f.contents()
	var expected [][]byte
	if expect != nil {
		expected = expect.contents()
	}
	for i, name := range confFiles {
		p := ConfDir + "/" + name
		if contents[i] == nil && expected != nil && expected[i] == nil {
			continue
		}
		if contents[i] == nil {
			if _, err := h.Sudo(ctx, transport.ScriptEnv+"rm -f -- "+transport.Quote(p), nil); err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
			continue
		}
		file := configFile(p, contents[i])
		if name == PrologFile || name == EpilogFile {
			// slurmd executes the copy it fetches; the mode says what the file is.
			file.Mode = 0o755
		}
		if expected != nil {
			file.ExpectSHA256 = expectedSHA256(expected[i], expected[i] != nil)
		}
		if _, err := h.WriteFile(ctx, file); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}
