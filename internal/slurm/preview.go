package slurm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

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
	// A job script counts only where there is one, so the digest of a cluster without any
	// stays what it was before the scripts existed.
	for _, s := range []struct {
		name string
		b    []byte
	}{{PrologFile, f.Prolog}, {EpilogFile, f.Epilog}} {
		if s.b != nil {
			all = append(strconv.AppendInt(append(all, s.name+"="...), int64(len(s.b)), 10), ':')
			all = append(all, s.b...)
		}
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
func Preview(ctx context.Context, ex transport.Executor, changes ...Fragment) (Outcome, error) {
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
		c.out.ReplacesDebianPlugstack = st.debianPlugstack
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
	c.files = &Files{SlurmConf: slurmConf, CgroupConf: cgroupConf, GresConf: gresConf,
		Prolog: scriptBytes(c.fragments.Controller.Prolog), Epilog: scriptBytes(c.fragments.Controller.Epilog)}
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

func filesEqual(a, b Files) bool {
	return bytes.Equal(a.SlurmConf, b.SlurmConf) && bytes.Equal(a.CgroupConf, b.CgroupConf) && bytes.Equal(a.GresConf, b.GresConf) && sameScripts(a, b)
}
