package slurm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Executor runs a script as root on a host.
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error)
}

// ControllerHost is what a change of the controller's files needs.
type ControllerHost interface {
	Executor
	WriteFile(ctx context.Context, f transport.File) (changed bool, err error)
	Lock(ctx context.Context) (unlock func(), err error)
}

// ConfDir is where slurmctld reads, and configless nodes fetch, the files.
const ConfDir = "/etc/slurm"

// writeAttempts bounds the retries of a write whose conditional write found that another
// process (another Terraform run) changed the files first.
const writeAttempts = 3

// Outcome is what an activation did, or would do.
type Outcome struct {
	Classification
	// Warnings are pitfalls that do not stop the change (P4, settings the version table
	// does not know).
	Warnings []string
	// CurrentSHA256 is the digest of the files slurmctld runs with before the activation,
	// NextSHA256 of those it runs with after it; empty while there are none.
	CurrentSHA256, NextSHA256 string
	// NodeStates are the drains and resumes SetNodeStates would make after the activation.
	NodeStates []NodeStateChange
	// Adopted are the fragments the change writes that were read from hand-written files
	// (AdoptFiles), before the files are rewritten from them: empty once FragmentDir holds the
	// provider's layout.
	Adopted []string
}

// NotRunningReason is the reason an activation starts a slurmctld that does not run.
const NotRunningReason = "slurmctld does not run"

// fragmentName matches the names ParseFragments accepts, so a name read from
// the host or given by a caller is safe in a path.
var fragmentName = regexp.MustCompile(`^(controller|accounting|(node|partition)-[A-Za-z0-9][A-Za-z0-9_.-]*)\.conf$`)

// state is the controller as one round trip found it.
type state struct {
	fragments map[string][]byte
	files     Files
	version   *version.Version // nil: slurmctld not installed
	// candidate is the slurmctld apt would install, while none is installed.
	candidate *version.Version
	active    bool
	// pending are the nodes whose slurmd restart, due after an ordered
	// restart, has not been done yet.
	pending []string
	// runtime is every node slurmctld knows, nil while it does not answer.
	runtime map[string]NodeRuntime
	// debianPlugstack: plugstack.conf is Debian's, whose include fails.
	debianPlugstack bool
	// adopted: FragmentDir holds no fragment, and fragments were read from hand-written
	// files by AdoptFiles: none of them is on disk yet.
	adopted bool
}

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

// Activate brings slurm.conf, cgroup.conf and gres.conf and the running slurmctld in line
// with the fragments, once, under the host's lock: nothing is written and no daemon touched
// when they already agree and slurmctld runs. The new slurm.conf is checked (P2, P14, the
// version gate, Slurm's own parser) before it is written; then slurmctld is reconfigured,
// restarted or, for an ordered restart, stopped before the write and started after it, the
// way the class of change needs, and the apply waits up to wait for it to answer. If it
// does not, the previous files are restored and slurmctld, if it ran before, is started
// with them again. An ordered restart leaves the restart of slurmd on
// Outcome.RestartNodes to the caller, and records those nodes as pending on the
// controller until ClearPendingRestart says they are done; restarts still pending from an
// earlier activation are returned too.
//
// A refusal before any write is a *RefusedError; a failed activation an *ActivationError.
func Activate(ctx context.Context, h ControllerHost, wait time.Duration) (Outcome, error) {
	unlock, err := h.Lock(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("slurm activation: %w", err)
	}
	defer unlock()
	for attempt := 1; ; attempt++ {
		out, err := activateOnce(ctx, h, wait)
		if !errors.Is(err, transport.ErrWriteConflict) || attempt == writeAttempts {
			return out, err
		}
	}
}

func activateOnce(ctx context.Context, h ControllerHost, wait time.Duration) (Outcome, error) {
	st, err := readState(ctx, h)
	if err != nil {
		return Outcome{}, err
	}
	c, err := prepare(st, nil)
	if err != nil {
		return Outcome{}, &RefusedError{Err: err}
	}
	if c.files == nil {
		return Outcome{}, &RefusedError{Err: fmt.Errorf("%s/%s does not exist: there is nothing to activate before gpucluster_slurm_controller writes it", FragmentDir, ControllerFile)}
	}
	if c.out.Class == NoChange && !st.adopted && filesEqual(st.files, *c.files) {
		return c.out, nil
	}
	if !filesEqual(st.files, *c.files) {
		if err := ValidateSlurmConf(ctx, h, c.files.SlurmConf); err != nil {
			return Outcome{}, &RefusedError{Err: err}
		}
	}
	if st.adopted {
		// The fragments read from the hand-written files go on disk first, so the files
		// written next are assembled from fragments that exist.
		if err := writeFragments(ctx, h, nil, c.next); err != nil {
			return Outcome{}, err
		}
	}
	if c.out.Class == NoChange {
		// The same settings in the provider's layout: slurmctld runs them already, and
		// configless nodes fetch the same from it, so no daemon is touched.
		if err := writeFiles(ctx, h, *c.files, &st.files); err != nil {
			return Outcome{}, err
		}
		return c.out, nil
	}
	// From the first write on, a cancelled apply (Ctrl-C) must not leave slurmctld stopped
	// or the files half-written: this part runs to its end, bounded by its own timeout,
	// which leaves room for a rollback's wait after the activation's.
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*wait+time.Minute)
	defer cancel()
	err = activate(settle, h, st, *c.files, c.out.Class, wait)
	if errors.Is(err, transport.ErrWriteConflict) {
		return Outcome{}, resume(settle, h, st, c.out.Class, err)
	}
	if err != nil {
		return Outcome{}, rollback(settle, h, st, c.fragments.Controller, wait, err)
	}
	if err := addPendingRestart(settle, h, c.out.RestartNodes); err != nil {
		return c.out, err
	}
	return c.out, nil
}

// resume follows a conditional write that lost to another process: that process's files
// stand, and slurmctld, if this activation stopped it, runs again before Activate starts
// over from a fresh read.
func resume(ctx context.Context, h ControllerHost, st state, class ChangeClass, conflict error) error {
	if class != OrderedRestart || !st.active {
		return conflict
	}
	if _, err := h.Sudo(ctx, transport.ScriptEnv+startSlurmctld("start"), nil); err != nil {
		return errors.Join(conflict, fmt.Errorf("start slurmctld again: %w", err))
	}
	return conflict
}

func filesSHA256(f Files) string {
	if f.SlurmConf == nil && f.CgroupConf == nil && f.GresConf == nil {
		return ""
	}
	// Each file's length before it, so no content can pass for another split of the three.
	var all []byte
	for _, b := range [][]byte{f.SlurmConf, f.CgroupConf, f.GresConf} {
		all = append(strconv.AppendInt(all, int64(len(b)), 10), ':')
		all = append(all, b...)
	}
	sum := sha256.Sum256(all)
	return hex.EncodeToString(sum[:])
}

// Preview is what Activate would do once changes, fragment changes not written yet (those a
// plan expects), are written, without changing anything: the class of change from the
// files slurmctld runs with, the nodes to restart (slurmd restarts still due included),
// the pitfall warnings, and the errors Activate would stop at (P2, P14, settings the
// installed version does not know). It does not run Slurm's parser. Without a controller
// fragment it still refuses a partition naming an undefined node (P14).
func Preview(ctx context.Context, ex Executor, changes ...Fragment) (Outcome, error) {
	if err := checkFragmentNames(changes); err != nil {
		return Outcome{}, err
	}
	st, err := readState(ctx, ex)
	if err != nil {
		return Outcome{}, err
	}
	c, err := prepare(st, changes)
	return c.out, err
}

func checkFragmentNames(changes []Fragment) error {
	for _, c := range changes {
		if !fragmentName.MatchString(c.File) {
			return fmt.Errorf("fragment name %q is not one this provider writes", c.File)
		}
	}
	return nil
}

// change is a set of fragment changes worked out against the controller's
// state: files is nil while there is no controller fragment.
type change struct {
	next      map[string][]byte
	fragments Fragments
	files     *Files
	out       Outcome
}

func prepare(st state, changes []Fragment) (change, error) {
	c := change{next: withChanges(st.fragments, changes)}
	c.out.CurrentSHA256 = filesSHA256(st.files)
	if st.adopted {
		for name := range st.fragments {
			if _, ok := c.next[name]; ok {
				c.out.Adopted = append(c.out.Adopted, name)
			}
		}
		sort.Strings(c.out.Adopted)
	}
	var err error
	if c.fragments, err = ParseFragments(c.next); err != nil {
		return change{}, err
	}
	slurmConf, cgroupConf, gresConf, err := Assemble(c.fragments)
	if errors.Is(err, ErrNoController) {
		for _, p := range c.fragments.Partitions {
			if err := CheckPartitionNodes(p, c.fragments.Nodes); err != nil {
				return change{}, err
			}
		}
		return c, nil
	}
	if err != nil {
		return change{}, err
	}
	if c.out.Warnings, err = checkBeforeWrite(st, c.fragments); err != nil {
		return change{}, err
	}
	c.files = &Files{SlurmConf: slurmConf, CgroupConf: cgroupConf, GresConf: gresConf}
	c.out.NextSHA256 = filesSHA256(*c.files)
	if !filesEqual(st.files, *c.files) {
		if c.out.Classification, err = Classify(st.files, *c.files); err != nil {
			return change{}, err
		}
	}
	if !st.active {
		c.out.Class = max(c.out.Class, RestartController)
		c.out.Reasons = append(c.out.Reasons, NotRunningReason)
	}
	c.out.NodeStates = nodeStateChanges(c.fragments.Nodes, st.runtime)
	if due := definedNodes(st.pending, c.fragments.Nodes); len(due) > 0 {
		c.out.Reasons = append(c.out.Reasons, "slurmd restart still due on "+CompressHostlist(due)+" since an earlier ordered restart")
		c.out.RestartNodes = union(c.out.RestartNodes, due)
	}
	return c, nil
}

// definedNodes are the names that a node definition still defines.
func definedNodes(names []string, nodes []NodeDef) []string {
	defined := map[string]bool{}
	for _, n := range nodes {
		defined[n.Name] = true
	}
	var out []string
	for _, name := range names {
		if defined[name] {
			out = append(out, name)
		}
	}
	return out
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// checkBeforeWrite runs the pitfall checks that need no node facts: P2,
// P4 (a warning) and the version gate. P14 is Assemble's. Before slurmctld is
// installed, the gate uses the version apt would install, so the first plan
// already refuses what the first apply would install and then fail on.
func checkBeforeWrite(st state, f Fragments) ([]string, error) {
	c, err := effectiveController(f)
	if err != nil {
		return nil, err
	}
	if err := CheckGPUAccounting(c); err != nil {
		return nil, err
	}
	var warnings []string
	for _, p := range f.Partitions {
		if w := CheckDefMemPerGPU(p, f.Nodes, *f.Controller); w != "" {
			warnings = append(warnings, w)
		}
		fits, err := CheckDefMemPerGPUFits(p, f.Nodes, *f.Controller)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, fits...)
	}
	v := st.version
	if v == nil {
		v = st.candidate
	}
	if v == nil {
		return warnings, nil
	}
	vw, err := CheckVersion(v, f)
	if err != nil && st.version == nil {
		err = fmt.Errorf("slurmctld is not installed yet; apt would install Slurm %s: %w", v.Original(), err)
	}
	return append(warnings, vw...), err
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

func filesEqual(a, b Files) bool {
	return bytes.Equal(a.SlurmConf, b.SlurmConf) && bytes.Equal(a.CgroupConf, b.CgroupConf) && bytes.Equal(a.GresConf, b.GresConf)
}

// missingFile is the status the read script gives a file that does not
// exist, apart from every status base64 can return.
const missingFile = 200

// confFiles are the files assembled on the controller, by base name.
var confFiles = []string{"slurm.conf", "cgroup.conf", "gres.conf"}

// fragmentsScript sends every fragment, base64-encoded: the section parser drops blank
// lines, and slurm.conf has them.
var fragmentsScript = fmt.Sprintf("for f in %s/*.conf; do\n\t[ -e \"$f\" ] || continue\n\tsec \"fragment ${f##*/}\"; base64 -w0 -- \"$f\"; end $?\ndone\n", FragmentDir)

// readFragments reads every fragment, and the files, in one round trip, for a write that
// needs nothing else: current are the fragments the resources have (AdoptFiles' while
// FragmentDir holds none), onDisk those FragmentDir holds.
func readFragments(ctx context.Context, ex Executor) (current, onDisk map[string][]byte, err error) {
	res, err := ex.Sudo(ctx, transport.ScriptEnv+transport.SectionFuncs+fragmentsScript+filesScript(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("read the slurm fragments: %w", err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return nil, nil, fmt.Errorf("read the slurm fragments: %w", err)
	}
	if onDisk, err = fragmentSections(sections); err != nil {
		return nil, nil, err
	}
	files, err := fileSections(sections)
	if err != nil {
		return nil, nil, err
	}
	current, _, err = fragmentsOrAdopted(onDisk, files)
	return current, onDisk, err
}

func fragmentSections(sections map[string]transport.Section) (map[string][]byte, error) {
	fragments := map[string][]byte{}
	for key, sec := range sections {
		name, ok := strings.CutPrefix(key, "fragment ")
		if !ok {
			continue
		}
		b, err := decodeSection(key, sec)
		if err != nil {
			return nil, err
		}
		fragments[name] = b
	}
	return fragments, nil
}

// filesScript sends the three files, base64-encoded, or the missingFile status.
func filesScript() string {
	var b strings.Builder
	for _, f := range confFiles {
		p := transport.Quote(ConfDir + "/" + f)
		fmt.Fprintf(&b, "sec 'file %s'\nif [ -e %s ]; then base64 -w0 -- %s; end $?; else end %d; fi\n", f, p, p, missingFile)
	}
	return b.String()
}

func fileSections(sections map[string]transport.Section) (Files, error) {
	contents := make([][]byte, len(confFiles))
	for i, f := range confFiles {
		sec, ok := sections["file "+f]
		if !ok {
			return Files{}, fmt.Errorf("read the slurm configuration: no answer for %s", f)
		}
		if sec.Status == missingFile {
			continue
		}
		var err error
		if contents[i], err = decodeSection(f, sec); err != nil {
			return Files{}, err
		}
	}
	return Files{SlurmConf: contents[0], CgroupConf: contents[1], GresConf: contents[2]}, nil
}

// readStateScript reads every fragment, the three files, slurmctld's
// version and whether it runs. Contents travel base64-encoded: the section
// parser drops blank lines, and slurm.conf has them. Every Slurm resource of a run
// reads this, so it is shared until the provider changes the controller.
func readStateScript() string {
	var b strings.Builder
	b.WriteString(transport.ScriptEnv + transport.SectionFuncs + fragmentsScript + filesScript())
	b.WriteString(versionSection("version", "slurmctld"))
	b.WriteString("sec candidate\ncommand -v slurmctld >/dev/null || apt-cache policy slurmctld 2>/dev/null | sed -n 's/^ *Candidate: *//p'; end 0\n")
	b.WriteString("sec active\nsystemctl is-active --quiet slurmctld; end $?\n")
	fmt.Fprintf(&b, "sec pending\nif [ -e %[1]s ]; then cat -- %[1]s; end $?; else end 0; fi\n", transport.Quote(pendingFile))
	b.WriteString(nodeRuntimeScript)
	b.WriteString(plugstackScript)
	return transport.ReadOnly(b.String())
}

func readState(ctx context.Context, ex Executor) (state, error) {
	res, err := ex.Sudo(ctx, readStateScript(), nil)
	if err != nil {
		return state{}, fmt.Errorf("read the slurm configuration: %w", err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return state{}, fmt.Errorf("read the slurm configuration: %w", err)
	}
	var st state
	if st.fragments, err = fragmentSections(sections); err != nil {
		return state{}, err
	}
	if st.files, err = fileSections(sections); err != nil {
		return state{}, err
	}
	if st.fragments, st.adopted, err = fragmentsOrAdopted(st.fragments, st.files); err != nil {
		return state{}, err
	}
	if st.version, err = parseVersionSection("slurmctld", sections["version"]); err != nil {
		return state{}, err
	}
	if st.version == nil {
		st.candidate = parseCandidate(sections["candidate"].Lines)
	}
	st.active = sections["active"].Status == 0 && len(sections["active"].Lines) == 0
	if st.pending, err = parsePending(sections["pending"]); err != nil {
		return state{}, err
	}
	st.runtime = parseNodeRuntimes(sections["runtime"])
	st.debianPlugstack = debianPlugstackIn(sections["plugstack"])
	return st, nil
}

// parseCandidate reads apt-cache policy's candidate, "24.11.5-4+deb13u1": the
// upstream version between an epoch and the Debian revision. None, or one it
// cannot read, is nil: the version gate then waits for the installed one.
func parseCandidate(lines []string) *version.Version {
	if len(lines) == 0 {
		return nil
	}
	upstream := strings.TrimSpace(lines[0])
	if _, rest, ok := strings.Cut(upstream, ":"); ok {
		upstream = rest
	}
	if i := strings.LastIndex(upstream, "-"); i > 0 {
		upstream = upstream[:i]
	}
	v, err := version.NewVersion(upstream)
	if err != nil {
		return nil
	}
	return v
}

func decodeSection(what string, sec transport.Section) ([]byte, error) {
	if sec.Status != 0 {
		return nil, fmt.Errorf("read %s: base64 exited with status %d", what, sec.Status)
	}
	b, err := base64.StdEncoding.DecodeString(strings.Join(sec.Lines, ""))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return b, nil
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

// writeFiles writes the three files, or removes one whose content is nil
// (a rollback to a controller that had none). With expect set, each write is
// conditional on the file still holding what expect has.
func writeFiles(ctx context.Context, h ControllerHost, f Files, expect *Files) error {
	contents := [][]byte{f.SlurmConf, f.CgroupConf, f.GresConf}
	var expected [][]byte
	if expect != nil {
		expected = [][]byte{expect.SlurmConf, expect.CgroupConf, expect.GresConf}
	}
	for i, name := range confFiles {
		p := ConfDir + "/" + name
		if contents[i] == nil {
			if _, err := h.Sudo(ctx, transport.ScriptEnv+"rm -f -- "+transport.Quote(p), nil); err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
			continue
		}
		file := configFile(p, contents[i])
		if expected != nil {
			file.ExpectSHA256 = expectedSHA256(expected[i], expected[i] != nil)
		}
		if _, err := h.WriteFile(ctx, file); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// activate writes the files and brings slurmctld onto them the way the class of change
// needs, then waits up to wait for it to answer.
func activate(ctx context.Context, h ControllerHost, st state, files Files, class ChangeClass, wait time.Duration) error {
	if class == OrderedRestart && st.active {
		// The node set changes: slurmctld must not run while the file lists other nodes
		// than its state.
		if _, err := h.Sudo(ctx, transport.ScriptEnv+"systemctl stop slurmctld", nil); err != nil {
			return fmt.Errorf("stop slurmctld: %w", err)
		}
		transport.Changed(ctx, h, "stopped slurmctld for an ordered restart")
	}
	if !filesEqual(st.files, files) {
		if err := writeFiles(ctx, h, files, &st.files); err != nil {
			return err
		}
	}
	var command, what, done string
	switch {
	case !st.active:
		command, what, done = "systemctl enable --quiet slurmctld || exit\n"+startSlurmctld("restart"), "start slurmctld", "started slurmctld"
	case class == Reconfigure:
		command, what, done = "scontrol reconfigure", "scontrol reconfigure", "reconfigured slurmctld"
	case class == OrderedRestart:
		command, what, done = startSlurmctld("start"), "start slurmctld", "started slurmctld"
	default:
		command, what, done = startSlurmctld("restart"), "restart slurmctld", "restarted slurmctld"
	}
	if _, err := h.Sudo(ctx, transport.ScriptEnv+command, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	transport.Changed(ctx, h, done)
	return waitController(ctx, h, wait)
}

// startSlurmctld is a systemctl start or restart that systemd's start limit cannot refuse:
// failures before this apply (a package's first start without slurm.conf, a hand-made
// restart loop) are forgotten first, and an activation starts slurmctld at most twice, the
// second time only to roll back.
func startSlurmctld(verb string) string {
	return "systemctl reset-failed slurmctld 2>/dev/null; systemctl " + verb + " slurmctld"
}

// rollback restores the files slurmctld ran with, starts it again if it ran, and reports
// cause together with the daemon's own log lines. It writes unconditionally: the host's
// lock is held, and what this activation wrote, in whole or in part, is what it replaces.
// The fragments stay: they are what the resources applied, and the activation stays
// pending until a change of them lets slurmctld start.
func rollback(ctx context.Context, h ControllerHost, st state, c *ControllerSettings, wait time.Duration, cause error) error {
	e := &ActivationError{Cause: cause, WasActive: st.active, Log: controllerLog(ctx, h, c)}
	e.RestoreErr = writeFiles(ctx, h, st.files, nil)
	if e.RestoreErr == nil && st.active {
		if _, err := h.Sudo(ctx, transport.ScriptEnv+startSlurmctld("restart"), nil); err != nil {
			e.RestoreErr = fmt.Errorf("restart slurmctld: %w", err)
		} else {
			transport.Changed(ctx, h, "restored the previous Slurm files and restarted slurmctld")
			e.RestoreErr = waitController(ctx, h, wait)
		}
	}
	return e
}

// controllerLog is slurmctld's last log lines: the journal, and its log
// file when slurm.conf names one.
func controllerLog(ctx context.Context, ex Executor, c *ControllerSettings) string {
	script := transport.ScriptEnv + "journalctl -u slurmctld -n 30 --no-pager -o short-iso 2>&1\n"
	if c != nil {
		if file, ok := lookup(c.Extra, "SlurmctldLogFile"); ok {
			script += "tail -n 30 -- " + transport.Quote(file) + " 2>&1\n"
		}
	}
	res, err := ex.Sudo(ctx, script, nil)
	text := strings.TrimSpace(string(res.Stdout))
	if err != nil {
		text += fmt.Sprintf("\n(reading the log failed: %v)", err)
	}
	return text
}

// ValidateSlurmConf has Slurm's own parser read content before it reaches
// /etc/slurm: scontrol parses slurm.conf fully at start (the code slurmctld
// uses) and stops on an unknown key or a malformed value. Slurm 24.11 has no
// config-test option for slurmctld, and a trial slurmctld would bind the
// controller's ports and read its state; what only the running daemon
// checks is caught by the restart's rollback.
func ValidateSlurmConf(ctx context.Context, ex Executor, content []byte) error {
	script := transport.ScriptEnv + `command -v scontrol >/dev/null || { echo "scontrol not found: install slurm-client" >&2; exit 127; }
d=$(mktemp -d) || exit 1
trap 'rm -rf -- "$d"' EXIT
cat > "$d/slurm.conf" || exit 1
SLURM_CONF="$d/slurm.conf" scontrol show hostnames localhost >/dev/null
`
	if _, err := ex.Sudo(ctx, script, content); err != nil {
		return fmt.Errorf("the new slurm.conf does not pass Slurm's parser, nothing was changed: %w", err)
	}
	return nil
}

// waitController polls `scontrol ping` until the primary slurmctld
// answers UP, with backoff, for at most timeout.
func waitController(ctx context.Context, ex Executor, timeout time.Duration) error {
	return poll(ctx, timeout, "wait for slurmctld", func(ctx context.Context) error {
		res, err := ex.Sudo(ctx, transport.ScriptEnv+"scontrol ping", nil)
		out := strings.TrimSpace(string(res.Stdout))
		if err == nil && pingUp(out) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("scontrol ping: %w", err)
		}
		return fmt.Errorf("scontrol ping: %q: %w", out, errNotYet)
	})
}

// pingUp reads "Slurmctld(primary) at login01 is UP".
func pingUp(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "(primary)") && strings.HasSuffix(strings.TrimSpace(line), "is UP") {
			return true
		}
	}
	return false
}
