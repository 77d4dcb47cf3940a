package slurm

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// AdoptError is a hand-written configuration that the provider's resources cannot hold as
// it is, so adopting it would change what Slurm runs with.
type AdoptError struct{ Err error }

func (e *AdoptError) Error() string {
	return "the hand-written " + ConfDir + " files cannot be adopted without changing what Slurm runs with: " + e.Err.Error() +
		"; change the line named so the resources can hold it, or move " + ConfDir + "/slurm.conf away to have the provider write the files from its resources alone"
}

func (e *AdoptError) Unwrap() error { return e.Err }

// AdoptFiles reads a slurm.conf, cgroup.conf and gres.conf that this provider did not write
// (a cluster built by hand, as the guide does) into the fragments its resources would write
// for the same configuration, by file name: one controller fragment with every cluster-wide
// setting, one per node (a NodeName line with a hostlist gives one per node, with the
// attributes of the NodeName=DEFAULT lines before it), one per partition. The fragments
// assemble to files that Classify finds equal to these, except where Slurm reads the same
// setting in two forms this package does not tell apart. What the resources cannot hold (a
// backup controller, Include, NodeSet, gres.conf lines other than GPUs by file or NVML) is
// an *AdoptError.
func AdoptFiles(f Files) (map[string][]byte, error) {
	fragments, err := adoptFiles(f)
	if err != nil {
		return nil, &AdoptError{Err: err}
	}
	return fragments, nil
}

func adoptFiles(f Files) (map[string][]byte, error) {
	conf, err := ParseConf(f.SlurmConf)
	if err != nil {
		return nil, fmt.Errorf("slurm.conf: %w", err)
	}
	c, err := adoptController(conf)
	if err != nil {
		return nil, fmt.Errorf("slurm.conf: %w", err)
	}
	if c.Cgroup, err = adoptCgroup(f.CgroupConf); err != nil {
		return nil, fmt.Errorf("cgroup.conf: %w", err)
	}
	fragments := map[string][]byte{}
	frag, err := ControllerFragment(c)
	if err != nil {
		return nil, err
	}
	fragments[frag.File] = frag.Content
	nodes, err := adoptNodes(conf, f.GresConf)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if frag, err = NodeFragment(n); err != nil {
			return nil, err
		}
		fragments[frag.File] = frag.Content
	}
	parts, err := adoptPartitions(conf)
	if err != nil {
		return nil, fmt.Errorf("slurm.conf: %w", err)
	}
	for _, p := range parts {
		if frag, err = PartitionFragment(p); err != nil {
			return nil, err
		}
		fragments[frag.File] = frag.Content
	}
	return fragments, nil
}

// typedFields maps the lower-case keys of fields to them, leaving out those named in skip.
func typedFields(fields []field, skip ...string) map[string]field {
	m := map[string]field{}
	for _, f := range fields {
		m[strings.ToLower(f.key)] = f
	}
	for _, k := range skip {
		delete(m, strings.ToLower(k))
	}
	return m
}

// adoptController reads the cluster-wide settings: the typed ones into their fields, every
// other one into Extra as the file spells it.
func adoptController(conf Conf) (ControllerSettings, error) {
	s := ControllerSettings{Extra: map[string]string{}}
	typed := typedFields(s.fields())
	seen := map[string]int{}
	for _, l := range conf.Lines {
		lower := strings.ToLower(l.Key)
		switch {
		case lower == "nodename" || lower == "partitionname":
			continue
		case l.IsRecord():
			return s, fmt.Errorf("line %d: %s lines have no resource here; remove them or write them as node and partition lines", l.Number, l.Key)
		case lower == "include":
			return s, fmt.Errorf("line %d: Include=%s: copy the included settings into slurm.conf first", l.Number, l.Value)
		case seen[lower] != 0:
			return s, fmt.Errorf("line %d: %s is set again (first on line %d); gpucluster_slurm_controller holds one value (no backup controller)", l.Number, l.Key, seen[lower])
		}
		seen[lower] = l.Number
		if f, ok := typed[lower]; ok {
			if err := f.decode(l.Value); err != nil {
				return s, fmt.Errorf("line %d: %w", l.Number, err)
			}
			continue
		}
		s.Extra[l.Key] = l.Value
	}
	if s.SlurmctldHost == "" {
		return s, errors.New("no SlurmctldHost line")
	}
	s.Extra = nilIfEmpty(s.Extra)
	return s, nil
}

// adoptCgroup reads cgroup.conf; a missing file, or a missing setting, is Slurm's default.
func adoptCgroup(content []byte) (CgroupSettings, error) {
	c := CgroupSettings{Extra: map[string]string{}}
	conf, err := ParseConf(content)
	if err != nil {
		return c, err
	}
	flags := map[string]*bool{"constraincores": &c.ConstrainCores, "constraindevices": &c.ConstrainDevices, "constrainramspace": &c.ConstrainRAMSpace}
	for _, l := range conf.Lines {
		lower := strings.ToLower(l.Key)
		switch flag, ok := flags[lower]; {
		case l.IsRecord():
			return c, fmt.Errorf("line %d: %s is not a cgroup.conf setting", l.Number, l.Key)
		case ok:
			b, err := slurmBool(l.Value)
			if err != nil {
				return c, fmt.Errorf("line %d: %s=%s: %w", l.Number, l.Key, l.Value, err)
			}
			*flag = b
		case lower == "cgroupplugin":
			c.CgroupPlugin = l.Value
		default:
			c.Extra[l.Key] = l.Value
		}
	}
	c.Extra = nilIfEmpty(c.Extra)
	return c, nil
}

// slurmBool reads a boolean as Slurm's parser does.
func slurmBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "true", "1", "up":
		return true, nil
	case "no", "false", "0", "down":
		return false, nil
	}
	return false, errors.New("want yes or no")
}

// adoptNodes reads the nodes, their GPU files from gres.conf.
func adoptNodes(conf Conf, gresConf []byte) ([]NodeDef, error) {
	records, err := nodeRecords(conf)
	if err != nil {
		return nil, fmt.Errorf("slurm.conf: %w", err)
	}
	names := make([]string, len(records))
	for i, r := range records {
		names[i] = r.name
	}
	files, err := gpuFiles(gresConf, names)
	if err != nil {
		return nil, fmt.Errorf("gres.conf: %w", err)
	}
	seen := map[string]int{}
	nodes := make([]NodeDef, 0, len(records))
	for _, r := range records {
		if first := seen[r.name]; first != 0 {
			return nil, fmt.Errorf("slurm.conf: line %d: node %s is defined again (first on line %d)", r.line, r.name, first)
		}
		seen[r.name] = r.line
		n := NodeDef{Name: r.name, State: DefaultNodeState, GPUFiles: files[r.name], Extra: map[string]string{}}
		typed := typedFields(n.fields(), "Name", "GPUFiles", "DrainReason")
		for _, a := range r.attrs {
			if f, ok := typed[strings.ToLower(a.Key)]; ok {
				if err := f.decode(a.Value); err != nil {
					return nil, fmt.Errorf("slurm.conf: line %d: node %s: %w", r.line, r.name, err)
				}
				continue
			}
			n.Extra[a.Key] = a.Value
		}
		n.Extra = nilIfEmpty(n.Extra)
		if _, gpus := gpuGres(n.Gres); !gpus && n.GPUFiles != "" {
			return nil, fmt.Errorf("gres.conf: lists GPU files for %s, whose NodeName line has no gpu Gres", r.name)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// adoptPartitions reads the partitions; Nodes=ALL is refused, as the provider checks every
// partition's nodes against the node definitions (pitfall P14).
func adoptPartitions(conf Conf) ([]PartitionDef, error) {
	var parts []PartitionDef
	seen := map[string]int{}
	for _, r := range partitionRecords(conf) {
		if first := seen[r.name]; first != 0 {
			return nil, fmt.Errorf("line %d: partition %s is defined again (first on line %d)", r.line, r.name, first)
		}
		seen[r.name] = r.line
		p := PartitionDef{Name: r.name, Extra: map[string]string{}}
		typed := typedFields(p.fields(), "Name", "Default", "Nodes")
		for _, a := range r.attrs {
			var err error
			switch lower := strings.ToLower(a.Key); {
			case lower == "default":
				p.Default, err = slurmBool(a.Value)
			case lower == "nodes" && strings.EqualFold(a.Value, "ALL"):
				err = errors.New("Nodes=ALL: list the nodes by name or hostlist")
			case lower == "nodes":
				p.Nodes, err = ExpandHostlist(a.Value)
			case typed[lower].key != "":
				err = typed[lower].decode(a.Value)
			default:
				p.Extra[a.Key] = a.Value
			}
			if err != nil {
				return nil, fmt.Errorf("line %d: partition %s: %w", r.line, r.name, err)
			}
		}
		p.Extra = nilIfEmpty(p.Extra)
		parts = append(parts, p)
	}
	return parts, nil
}

// gpuFiles are the GPU device files gres.conf gives each node of nodes; a node found with
// AutoDetect=nvml has none, as the provider writes it.
func gpuFiles(content []byte, nodes []string) (map[string]string, error) {
	entries, err := gresEntries(content, nodes)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for node, es := range entries {
		var explicit []gresEntry
		auto := false
		for _, e := range es {
			if e.file == "" {
				auto = true
			} else {
				explicit = append(explicit, e)
			}
		}
		switch {
		case len(explicit) > 1:
			return nil, fmt.Errorf("node %s has %d GPU lines; the provider writes one (gpu_files)", node, len(explicit))
		case len(explicit) == 1 && auto:
			return nil, fmt.Errorf("node %s has both AutoDetect=nvml and a File= line", node)
		case len(explicit) == 1:
			files[node] = explicit[0].file
		}
	}
	return files, nil
}

// gresEntry is one GPU line of gres.conf as it applies to one node.
type gresEntry struct{ typ, file string }

func (e gresEntry) String() string {
	if e.file == "" {
		return "autodetect=nvml"
	}
	return "name=gpu type=" + e.typ + " file=" + e.file
}

// gresByNode is, for each node, its GPU entries as text, for a comparison.
func gresByNode(content []byte, nodes []string) (map[string][]string, error) {
	entries, err := gresEntries(content, nodes)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for node, es := range entries {
		for _, e := range es {
			out[node] = append(out[node], e.String())
		}
		sort.Strings(out[node])
	}
	return out, nil
}

// gresEntries reads gres.conf's GPU lines, by node: a line without NodeName, and
// AutoDetect=nvml on a line of its own, apply to every node of nodes. Only what the provider
// writes itself is read: Name=gpu with File= (and Type=), and AutoDetect=nvml.
func gresEntries(content []byte, nodes []string) (map[string][]gresEntry, error) {
	conf, err := ParseGresConf(content)
	if err != nil {
		return nil, err
	}
	out := map[string][]gresEntry{}
	for _, l := range conf.Lines {
		targets := nodes
		var e gresEntry
		name, auto := "", ""
		pairs := append([]ConfPair{{Key: l.Key, Value: l.Value}}, l.Attrs...)
		for _, p := range pairs {
			switch strings.ToLower(p.Key) {
			case "nodename":
				if targets, err = ExpandHostlist(p.Value); err != nil {
					return nil, fmt.Errorf("line %d: %w", l.Number, err)
				}
			case "name":
				name = p.Value
			case "type":
				e.typ = p.Value
			case "file":
				e.file = p.Value
			case "autodetect":
				auto = strings.ToLower(p.Value)
			default:
				return nil, fmt.Errorf("line %d: %s= is not among the settings the provider writes (Name=gpu, Type, File, AutoDetect=nvml)", l.Number, p.Key)
			}
		}
		switch {
		case auto != "" && (auto != "nvml" || e.file != "" || (name != "" && name != "gpu")):
			return nil, fmt.Errorf("line %d: only AutoDetect=nvml alone is read", l.Number)
		case auto == "" && (name != "gpu" || e.file == ""):
			return nil, fmt.Errorf("line %d: only Name=gpu lines with File= are read", l.Number)
		}
		for _, n := range targets {
			out[n] = append(out[n], e)
		}
	}
	return out, nil
}

// fragmentsOrAdopted are the fragments on disk, or, while there are none and slurm.conf
// exists, those AdoptFiles reads from the files.
func fragmentsOrAdopted(onDisk map[string][]byte, files Files) (map[string][]byte, bool, error) {
	if len(onDisk) > 0 || files.SlurmConf == nil {
		return onDisk, false, nil
	}
	adopted, err := AdoptFiles(files)
	return adopted, err == nil, err
}
