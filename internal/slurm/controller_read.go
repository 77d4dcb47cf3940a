package slurm

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// ConfDir is where slurmctld reads, and configless nodes fetch, the files.
const ConfDir = "/etc/slurm"

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

// missingFile is the status the read script gives a file that does not
// exist, apart from every status base64 can return.
const missingFile = 200

// confFiles are the files assembled on the controller, by base name, in the order of
// Files.contents.
var confFiles = []string{"slurm.conf", "cgroup.conf", "gres.conf", PrologFile, EpilogFile}

// fragmentsScript sends every fragment hex-encoded (the section parser drops blank lines, and
// slurm.conf has them) from one perl process: a base64 per file cost the controller a process
// per GPU server in every plan. Its "fragments" section carries perl's exit status, so a read
// that failed part-way fails instead of losing the fragments after it.
var fragmentsScript = "perl -e '" + fragmentsPerl + "' " + FragmentDir + "/*.conf\nsecv fragments $?\n"

// fragmentsPerl prints a section per fragment file it is given; a pattern that matched no file
// arrives as itself and is skipped.
var fragmentsPerl = transport.PerlSections + fragmentsPl

//go:embed fragments.pl
var fragmentsPl string

// readFragments reads every fragment, and the files, in one round trip, for a write that
// needs nothing else: current are the fragments the resources have (AdoptFiles' while
// FragmentDir holds none), onDisk those FragmentDir holds.
func readFragments(ctx context.Context, ex transport.Executor) (current, onDisk map[string][]byte, err error) {
	sections, err := transport.SudoSections(ctx, ex, transport.ScriptEnv+transport.SectionFuncs+fragmentsScript+filesScript(), "read the slurm fragments")
	if err != nil {
		return nil, nil, err
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
	switch done, ok := sections["fragments"]; {
	case !ok:
		return nil, fmt.Errorf("read the slurm fragments in %s: no answer after them", FragmentDir)
	case done.Status != 0:
		return nil, fmt.Errorf("read the slurm fragments in %s: perl exited with status %d", FragmentDir, done.Status)
	}
	fragments := map[string][]byte{}
	for key, sec := range sections {
		name, ok := strings.CutPrefix(key, "fragment ")
		if !ok {
			continue
		}
		if sec.Status != 0 {
			return nil, fmt.Errorf("read the slurm fragment %s: it cannot be read (status %d)", name, sec.Status)
		}
		b, err := hex.DecodeString(strings.Join(sec.Lines, ""))
		if err != nil {
			return nil, fmt.Errorf("read the slurm fragment %s: %w", name, err)
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
		fmt.Fprintf(&b, "if [ -e %[2]s ]; then sec 'file %[1]s' base64 -w0 -- %[2]s; else secv 'file %[1]s' %[3]d; fi\n", f, p, missingFile)
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
	return Files{SlurmConf: contents[0], CgroupConf: contents[1], GresConf: contents[2], Prolog: contents[3], Epilog: contents[4]}, nil
}

// readStateScript reads every fragment, the three files, slurmctld's
// version and whether it runs. Contents travel base64-encoded: the section
// parser drops blank lines, and slurm.conf has them. Every Slurm resource of a run
// reads this, so it is shared until the provider changes the controller.
func readStateScript() string {
	var b strings.Builder
	b.WriteString(transport.ScriptEnv + transport.SectionFuncs + fragmentsScript + filesScript())
	b.WriteString(versionSection("version", "slurmctld"))
	b.WriteString("candidate() { apt-cache policy slurmctld 2>/dev/null | sed -n 's/^ *Candidate: *//p'; }\n")
	b.WriteString("if command -v slurmctld >/dev/null; then secv candidate 0; else sec candidate candidate; fi\n")
	b.WriteString("systemctl is-active --quiet slurmctld; secv active $?\n")
	fmt.Fprintf(&b, "if [ -e %[1]s ]; then sec pending cat -- %[1]s; else secv pending 0; fi\n", transport.Quote(pendingFile))
	b.WriteString(nodeRuntimeScript)
	b.WriteString(plugstackScript)
	return b.String()
}

func readState(ctx context.Context, ex transport.Executor) (state, error) {
	sections, err := transport.ReadSections(ctx, ex, readStateScript(), "read the slurm configuration")
	if err != nil {
		return state{}, err
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
