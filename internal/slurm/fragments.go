package slurm

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FragmentDir holds one fragment per resource on the controller. slurm.conf,
// cgroup.conf and gres.conf are assembled from all of them, so each apply
// ends with one consistent set of files whichever resource ran it.
const FragmentDir = "/etc/slurm/gpucluster.d"

// ControllerFile is the controller resource's fragment.
const ControllerFile = "controller.conf"

// NodeFile is the fragment of the node called name.
func NodeFile(name string) string { return "node-" + name + ".conf" }

// PartitionFile is the fragment of the partition called name.
func PartitionFile(name string) string { return "partition-" + name + ".conf" }

// Fragment is one resource's file in FragmentDir. Nil Content removes it.
type Fragment struct {
	File    string
	Content []byte
}

// RemoveFragment is the change that deletes file from FragmentDir.
func RemoveFragment(file string) Fragment { return Fragment{File: file} }

// Fragments is everything the fragment files define.
type Fragments struct {
	// Controller is nil until the controller resource wrote its fragment.
	Controller *ControllerSettings
	Nodes      []NodeDef
	Partitions []PartitionDef
	// Accounting is nil until gpucluster_slurm_accounting wrote its fragment.
	Accounting *AccountingSettings
}

// ErrNoController means no controller fragment exists yet, so there is no
// slurm.conf to assemble: the other fragments wait for it.
var ErrNoController = errors.New("no controller fragment yet")

// Fragment kinds, the first setting of each file.
const (
	kindController = "controller"
	kindNode       = "node"
	kindPartition  = "partition"
)

// field ties a fragment key to one typed field, so encoding and decoding
// cannot disagree about names.
type field struct {
	key   string
	str   *string
	num   *int
	num64 *int64
	list  *[]string
	flag  *bool
	// script is text of many lines, hex-encoded on its one line.
	script *string
}

func (s *ControllerSettings) fields() []field {
	return []field{
		{key: "ClusterName", str: &s.ClusterName}, {key: "SlurmctldHost", str: &s.SlurmctldHost},
		{key: "SlurmUser", str: &s.SlurmUser}, {key: "AuthType", str: &s.AuthType}, {key: "CredType", str: &s.CredType},
		{key: "StateSaveLocation", str: &s.StateSaveLocation}, {key: "SlurmdSpoolDir", str: &s.SlurmdSpoolDir},
		{key: "SlurmctldPort", num: &s.SlurmctldPort}, {key: "SlurmdPort", num: &s.SlurmdPort},
		{key: "SrunPortRange", str: &s.SrunPortRange}, {key: "SlurmctldParameters", list: &s.SlurmctldParameters},
		{key: "SchedulerType", str: &s.SchedulerType}, {key: "EnforcePartLimits", str: &s.EnforcePartLimits},
		{key: "ReturnToService", num: &s.ReturnToService}, {key: "GresTypes", str: &s.GresTypes},
		{key: "SelectType", str: &s.SelectType}, {key: "SelectTypeParameters", str: &s.SelectTypeParameters},
		{key: "ProctrackType", str: &s.ProctrackType}, {key: "TaskPlugin", str: &s.TaskPlugin},
		{key: "JobAcctGatherType", str: &s.JobAcctGatherType}, {key: "MailProg", str: &s.MailProg},
		{key: "cgroup.CgroupPlugin", str: &s.Cgroup.CgroupPlugin},
		{key: "cgroup.ConstrainCores", flag: &s.Cgroup.ConstrainCores},
		{key: "cgroup.ConstrainDevices", flag: &s.Cgroup.ConstrainDevices},
		{key: "cgroup.ConstrainRAMSpace", flag: &s.Cgroup.ConstrainRAMSpace},
		{key: PrologField, script: &s.Prolog}, {key: EpilogField, script: &s.Epilog},
		{key: HealthCheckField, script: &s.HealthCheckProgram}, {key: "HealthCheckInterval", num: &s.HealthCheckInterval},
		{key: "HealthCheckNodeState", list: &s.HealthCheckNodeState},
	}
}

func (n *NodeDef) fields() []field {
	return []field{
		{key: "Name", str: &n.Name}, {key: "CPUs", num: &n.CPUs}, {key: "Boards", num: &n.Boards},
		{key: "SocketsPerBoard", num: &n.SocketsPerBoard}, {key: "CoresPerSocket", num: &n.CoresPerSocket},
		{key: "ThreadsPerCore", num: &n.ThreadsPerCore}, {key: "RealMemory", num64: &n.RealMemory},
		{key: "Gres", str: &n.Gres}, {key: "GPUFiles", str: &n.GPUFiles}, {key: "State", str: &n.State},
		{key: "DrainReason", str: &n.DrainReason},
	}
}

func (p *PartitionDef) fields() []field {
	return []field{
		{key: "Name", str: &p.Name}, {key: "Nodes", list: &p.Nodes}, {key: "Default", flag: &p.Default},
		{key: "MaxTime", str: &p.MaxTime}, {key: "State", str: &p.State},
		{key: "AllowGroups", list: &p.AllowGroups}, {key: "DefMemPerGPU", num64: &p.DefMemPerGPU},
	}
}

func (f field) encode() string {
	switch {
	case f.str != nil:
		return *f.str
	case f.num != nil:
		return itoa(int64(*f.num))
	case f.num64 != nil:
		return itoa(*f.num64)
	case f.list != nil:
		return strings.Join(*f.list, ",")
	case f.script != nil:
		return hex.EncodeToString([]byte(*f.script))
	default:
		return yesNo(*f.flag)
	}
}

func (f field) decode(v string) error {
	switch {
	case f.str != nil:
		*f.str = v
	case f.num != nil:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s=%q: not a number", f.key, v)
		}
		*f.num = n
	case f.num64 != nil:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s=%q: not a number", f.key, v)
		}
		*f.num64 = n
	case f.list != nil:
		*f.list = strings.Split(v, ",")
	case f.script != nil:
		b, err := hex.DecodeString(v)
		if err != nil {
			return fmt.Errorf("%s: not hex: %w", f.key, err)
		}
		*f.script = string(b)
	default:
		if v != "yes" && v != "no" {
			return fmt.Errorf("%s=%q: want yes or no", f.key, v)
		}
		*f.flag = v == "yes"
	}
	return nil
}

// extraPrefix marks an Extra entry in a fragment; extra keys are Slurm's
// own names, so they can never collide with a typed key.
const extraPrefix = "extra."

func encodeFragment(kind, owner string, fields []field, extras map[string]map[string]string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Fragment of %s: written by %s, do not edit.\n", "slurm.conf", owner)
	fmt.Fprintf(&b, "kind=%s\n", kind)
	for _, f := range fields {
		if v := f.encode(); v != "" {
			fmt.Fprintf(&b, "%s=%s\n", f.key, v)
		}
	}
	prefixes := slices.Sorted(maps.Keys(extras))
	for _, p := range prefixes {
		for _, s := range extraSettings(extras[p]) {
			fmt.Fprintf(&b, "%s%s%s=%s\n", p, extraPrefix, s.key, s.value)
		}
	}
	return b.Bytes()
}

// decodeFragment reads a fragment's key=value lines into fields and the
// Extra maps named by their prefix. Unknown keys are errors: the format is
// ours, so an unknown key means a damaged or foreign file.
func decodeFragment(content []byte, kind string, fields []field, extras map[string]map[string]string) error {
	byKey := map[string]field{}
	for _, f := range fields {
		byKey[f.key] = f
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("line %q: want key=value", line)
		}
		if seen[key] {
			return fmt.Errorf("key %s appears twice", key)
		}
		seen[key] = true
		if err := decodeLine(key, value, kind, byKey, extras); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !seen["kind"] {
		return errors.New("no kind line")
	}
	return nil
}

func decodeLine(key, value, kind string, byKey map[string]field, extras map[string]map[string]string) error {
	if key == "kind" {
		if value != kind {
			return fmt.Errorf("kind=%s, want %s", value, kind)
		}
		return nil
	}
	if f, ok := byKey[key]; ok {
		return f.decode(value)
	}
	for prefix, m := range extras {
		if name, ok := strings.CutPrefix(key, prefix+extraPrefix); ok && !strings.Contains(name, ".") {
			m[name] = value
			return nil
		}
	}
	return fmt.Errorf("unknown key %s", key)
}

// ControllerFragment is the controller resource's fragment.
func ControllerFragment(s ControllerSettings) (Fragment, error) {
	if err := s.Validate(); err != nil {
		return Fragment{}, err
	}
	if err := s.CheckValues(); err != nil {
		return Fragment{}, err
	}
	content := encodeFragment(kindController, "gpucluster_slurm_controller", s.fields(),
		map[string]map[string]string{"": s.Extra, "cgroup.": s.Cgroup.Extra})
	return Fragment{File: ControllerFile, Content: content}, nil
}

// NodeFragment is a node resource's fragment.
func NodeFragment(n NodeDef) (Fragment, error) {
	if err := n.Validate(); err != nil {
		return Fragment{}, err
	}
	if err := n.CheckValues(); err != nil {
		return Fragment{}, err
	}
	content := encodeFragment(kindNode, "gpucluster_slurm_node "+n.Name, n.fields(), map[string]map[string]string{"": n.Extra})
	return Fragment{File: NodeFile(n.Name), Content: content}, nil
}

// PartitionFragment is a partition resource's fragment.
func PartitionFragment(p PartitionDef) (Fragment, error) {
	if err := p.Validate(); err != nil {
		return Fragment{}, err
	}
	if err := p.CheckValues(); err != nil {
		return Fragment{}, err
	}
	content := encodeFragment(kindPartition, "gpucluster_slurm_partition "+p.Name, p.fields(), map[string]map[string]string{"": p.Extra})
	return Fragment{File: PartitionFile(p.Name), Content: content}, nil
}

// ParseControllerFragment reads a controller fragment back.
func ParseControllerFragment(content []byte) (ControllerSettings, error) {
	s := ControllerSettings{Extra: map[string]string{}, Cgroup: CgroupSettings{Extra: map[string]string{}}}
	if err := decodeFragment(content, kindController, s.fields(), map[string]map[string]string{"": s.Extra, "cgroup.": s.Cgroup.Extra}); err != nil {
		return ControllerSettings{}, err
	}
	s.Extra, s.Cgroup.Extra = nilIfEmpty(s.Extra), nilIfEmpty(s.Cgroup.Extra)
	return s, s.Validate()
}

// ParseNodeFragment reads a node fragment back.
func ParseNodeFragment(content []byte) (NodeDef, error) {
	n := NodeDef{Extra: map[string]string{}}
	if err := decodeFragment(content, kindNode, n.fields(), map[string]map[string]string{"": n.Extra}); err != nil {
		return NodeDef{}, err
	}
	n.Extra = nilIfEmpty(n.Extra)
	return n, n.Validate()
}

// ParsePartitionFragment reads a partition fragment back.
func ParsePartitionFragment(content []byte) (PartitionDef, error) {
	p := PartitionDef{Extra: map[string]string{}}
	if err := decodeFragment(content, kindPartition, p.fields(), map[string]map[string]string{"": p.Extra}); err != nil {
		return PartitionDef{}, err
	}
	p.Extra = nilIfEmpty(p.Extra)
	return p, p.Validate()
}

// ParseFragments reads FragmentDir's files, by base name. A file whose name
// and content disagree (node-gpu01.conf defining gpu02) is an error.
func ParseFragments(files map[string][]byte) (Fragments, error) {
	var f Fragments
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if err := f.add(name, files[name]); err != nil {
			return Fragments{}, fmt.Errorf("fragment %s/%s: %w", FragmentDir, name, err)
		}
	}
	return f, nil
}

func (f *Fragments) add(name string, content []byte) error {
	switch {
	case name == ControllerFile:
		s, err := ParseControllerFragment(content)
		if err != nil {
			return err
		}
		f.Controller = &s
	case name == AccountingFile:
		a, err := ParseAccountingFragment(content)
		if err != nil {
			return err
		}
		f.Accounting = &a
	case strings.HasPrefix(name, "node-"):
		n, err := ParseNodeFragment(content)
		if err != nil {
			return err
		}
		if NodeFile(n.Name) != name {
			return fmt.Errorf("defines node %q", n.Name)
		}
		f.Nodes = append(f.Nodes, n)
	case strings.HasPrefix(name, "partition-"):
		p, err := ParsePartitionFragment(content)
		if err != nil {
			return err
		}
		if PartitionFile(p.Name) != name {
			return fmt.Errorf("defines partition %q", p.Name)
		}
		f.Partitions = append(f.Partitions, p)
	default:
		return errors.New("not a fragment name this provider writes")
	}
	return nil
}

// Assemble renders slurm.conf, cgroup.conf and gres.conf from all
// fragments; the accounting fragment's lines join the controller's extra ones. A partition naming a node no fragment defines is refused
// (pitfall P14): slurmctld would not start with it.
func Assemble(f Fragments) (slurmConf, cgroupConf, gresConf []byte, err error) {
	if f.Controller == nil {
		return nil, nil, nil, ErrNoController
	}
	if f.Controller.SlurmctldHost == "" {
		return nil, nil, nil, errors.New("controller fragment: SlurmctldHost is empty")
	}
	for _, p := range f.Partitions {
		if err := CheckPartitionNodes(p, f.Nodes); err != nil {
			return nil, nil, nil, err
		}
	}
	c, err := effectiveController(f)
	if err != nil {
		return nil, nil, nil, err
	}
	return RenderSlurmConf(c, f.Nodes, f.Partitions), RenderCgroupConf(c.Cgroup), RenderGresConf(f.Nodes), nil
}

// nilIfEmpty keeps "no extra settings" one value, so a parsed fragment
// equals the definition it was written from.
func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
