package slurm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Scope is the file or line a setting belongs to.
type Scope string

// The scopes of the settings the provider writes.
const (
	ScopeSlurmConf Scope = "slurm.conf"
	ScopeNode      Scope = "NodeName line"
	ScopePartition Scope = "PartitionName line"
	ScopeCgroup    Scope = "cgroup.conf"
)

// keyChange records the release that added or removed a setting. Sources:
// Slurm's RELEASE_NOTES/NEWS and the slurm.conf man page of each release,
// checked against the parser of Slurm 24.11 (Debian 13) and 26.05 (Debian
// forky) by TestLabSettingsTableMatchesParser. Where the parser reads a name
// outside the releases that document it (parserReads), the provider still
// refuses it, so that the plan names the change instead of slurmctld
// starting with a setting that does nothing or is not yet supported.
type keyChange struct {
	scope          Scope
	key            string
	added, removed string
	note           string
	parserReads    bool
}

var keysChanged = []keyChange{
	{scope: ScopeSlurmConf, key: "SlurmctldHost", added: "18.08", note: "it replaced ControlMachine"},
	{scope: ScopeSlurmConf, key: "DefCpuPerGPU", added: "19.05"},
	{scope: ScopeSlurmConf, key: "DefMemPerGPU", added: "19.05"},
	{scope: ScopePartition, key: "DefCpuPerGPU", added: "19.05"},
	{scope: ScopePartition, key: "DefMemPerGPU", added: "19.05"},
	{scope: ScopeSlurmConf, key: "FastSchedule", removed: "20.02", parserReads: true},
	{scope: ScopeSlurmConf, key: "CryptoType", removed: "23.11", note: "it was renamed CredType", parserReads: true},
	{scope: ScopeSlurmConf, key: "CredType", added: "23.11", note: "older releases call it CryptoType=crypto/munge"},
	{scope: ScopeSlurmConf, key: "HashPlugin", added: "23.11"},
	// 24.11 ships the parser entries and only the tls/none and certmgr/script
	// plugins; the settings are documented, and tls/s2n shipped, from 25.05.
	{scope: ScopeSlurmConf, key: "TLSType", added: "25.05", parserReads: true},
	{scope: ScopeSlurmConf, key: "TLSParameters", added: "25.05", parserReads: true},
	{scope: ScopeSlurmConf, key: "CertmgrType", added: "25.05", parserReads: true},
	{scope: ScopeSlurmConf, key: "CertmgrParameters", added: "25.05", parserReads: true},
	{scope: ScopeSlurmConf, key: "PrologTimeout", added: "25.05", note: "it split PrologEpilogTimeout"},
	{scope: ScopeSlurmConf, key: "EpilogTimeout", added: "25.05", note: "it split PrologEpilogTimeout"},
	{scope: ScopeSlurmConf, key: "GetEnvTimeout", removed: "25.05", parserReads: true},
	{scope: ScopeSlurmConf, key: "MetricsType", added: "25.11"},
	{scope: ScopeSlurmConf, key: "NamespaceType", added: "25.11", note: "it succeeds JobContainerType"},
	{scope: ScopeSlurmConf, key: "AccountingStorageUser", removed: "25.11", parserReads: true},
}

// fullList is the release whose complete list of settings keys2411 holds:
// only there is a setting missing from the list known to be wrong.
var fullList = version.Must(version.NewVersion("24.11"))

func words(s string) []string { return strings.Fields(s) }

// ParseVersion reads `slurmctld -V` or `slurmd -V`: "slurm 24.11.5"
// upstream, "slurm-wlm 24.11.5" in Debian's packages.
func ParseVersion(out string) (*version.Version, error) {
	f := strings.Fields(out)
	if len(f) < 2 || (f[0] != "slurm" && !strings.HasPrefix(f[0], "slurm-")) {
		return nil, fmt.Errorf("unexpected version output %q", strings.TrimSpace(out))
	}
	v, err := version.NewVersion(f[1])
	if err != nil {
		return nil, fmt.Errorf("version output %q: %w", strings.TrimSpace(out), err)
	}
	return v, nil
}

// versionSection asks daemon for its version inside a batched script, with
// status 127 when it is not installed, so every reader of a version (a state
// read, ReadVersion) asks and parses the same way.
func versionSection(key, daemon string) string {
	d := transport.Quote(daemon)
	return "if command -v " + d + " >/dev/null; then sec " + key + " " + d + " -V; else secv " + key + " 127; fi\n"
}

// parseVersionSection reads versionSection's answer: nil when the daemon is
// not installed.
func parseVersionSection(daemon string, sec transport.Section) (*version.Version, error) {
	switch sec.Status {
	case 0:
	case 127:
		return nil, nil
	default:
		return nil, fmt.Errorf("%s -V exited with status %d", daemon, sec.Status)
	}
	v, err := ParseVersion(strings.Join(sec.Lines, "\n"))
	if err != nil {
		return nil, fmt.Errorf("%s -V: %w", daemon, err)
	}
	return v, nil
}

// ReadVersion asks daemon ("slurmctld" or "slurmd") for its version; a
// daemon that is not installed is an error.
func ReadVersion(ctx context.Context, ex transport.Executor, daemon string) (*version.Version, error) {
	if daemon != "slurmctld" && daemon != "slurmd" {
		return nil, fmt.Errorf("read version: unknown daemon %q", daemon)
	}
	sections, err := transport.SudoSections(ctx, ex, transport.NewScript().Text(transport.SectionFuncs+versionSection("version", daemon)).String(), daemon+" -V")
	if err != nil {
		return nil, err
	}
	v, err := parseVersionSection(daemon, sections["version"])
	if err == nil && v == nil {
		err = fmt.Errorf("%s is not installed", daemon)
	}
	return v, err
}

// CheckKeys refuses settings the installed Slurm does not know: those added
// after it or removed before it, and, on 24.11 whose full list the package
// holds, any name missing from that list. On other releases an unlisted
// name is a warning: slurmctld is the judge then.
func CheckKeys(v *version.Version, scope Scope, keys []string) (warnings []string, err error) {
	known := map[string]bool{}
	for _, k := range keys2411[scope] {
		known[strings.ToLower(k)] = true
	}
	var errs []error
	for _, key := range keys {
		if c, ok := findChange(scope, key); ok {
			if e := c.check(v); e != nil {
				errs = append(errs, e)
			}
			continue
		}
		if known[strings.ToLower(key)] {
			continue
		}
		if sameRelease(v, fullList) {
			errs = append(errs, fmt.Errorf("%s setting %s is unknown to Slurm %s", scope, key, v.Original()))
		} else {
			warnings = append(warnings, fmt.Sprintf("%s setting %s is not in the provider's list of Slurm settings; slurmctld %s will be the judge", scope, key, v.Original()))
		}
	}
	return warnings, errors.Join(errs...)
}

func findChange(scope Scope, key string) (keyChange, bool) {
	for _, c := range keysChanged {
		if c.scope == scope && strings.EqualFold(c.key, key) {
			return c, true
		}
	}
	return keyChange{}, false
}

func (c keyChange) check(v *version.Version) error {
	note := ""
	if c.note != "" {
		note = " (" + c.note + ")"
	}
	parser := ""
	if c.parserReads {
		parser = ", whose parser accepts the name all the same; the provider refuses it so that the plan says so"
	}
	if c.added != "" && v.LessThan(version.Must(version.NewVersion(c.added))) {
		return fmt.Errorf("%s setting %s was added in Slurm %s%s; the installed Slurm is %s%s", c.scope, c.key, c.added, note, v.Original(), parser)
	}
	if c.removed != "" && !v.LessThan(version.Must(version.NewVersion(c.removed))) {
		return fmt.Errorf("%s setting %s was removed in Slurm %s%s; the installed Slurm is %s%s", c.scope, c.key, c.removed, note, v.Original(), parser)
	}
	return nil
}

// sameRelease compares year.month, the part of a Slurm version that
// changes its settings.
func sameRelease(a, b *version.Version) bool {
	sa, sb := a.Segments(), b.Segments()
	return sa[0] == sb[0] && sa[1] == sb[1]
}

// CheckVersion checks every setting the fragments would write against the
// installed Slurm.
func CheckVersion(v *version.Version, f Fragments) (warnings []string, err error) {
	byScope := map[Scope][]string{}
	add := func(scope Scope, settings []setting) {
		for _, s := range settings {
			if s.value != "" {
				byScope[scope] = append(byScope[scope], s.key)
			}
		}
	}
	if c := f.Controller; c != nil {
		for _, g := range c.groups() {
			add(ScopeSlurmConf, g)
		}
		add(ScopeSlurmConf, extraSettings(c.Extra))
		add(ScopeCgroup, append(c.Cgroup.settings(), extraSettings(c.Cgroup.Extra)...))
	}
	for _, n := range f.Nodes {
		add(ScopeNode, append(n.hardware(), extraSettings(n.Extra)...))
	}
	for _, p := range f.Partitions {
		add(ScopePartition, append(p.settings(), extraSettings(p.Extra)...))
	}
	var errs []error
	for _, scope := range []Scope{ScopeSlurmConf, ScopeCgroup, ScopeNode, ScopePartition} {
		w, err := CheckKeys(v, scope, dedupe(byScope[scope]))
		warnings = append(warnings, w...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	sort.Strings(warnings)
	return warnings, errors.Join(errs...)
}
