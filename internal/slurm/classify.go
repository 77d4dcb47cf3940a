package slurm

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// ChangeClass is what a configuration change asks of the daemons, from the
// least to the most disruptive.
type ChangeClass int

// The classes of change.
const (
	NoChange ChangeClass = iota
	Reconfigure
	RestartController
	OrderedRestart
)

func (c ChangeClass) String() string {
	switch c {
	case NoChange:
		return "none"
	case Reconfigure:
		return "reconfigure"
	case RestartController:
		return "restart of slurmctld"
	case OrderedRestart:
		return "ordered restart"
	}
	return fmt.Sprintf("ChangeClass(%d)", int(c))
}

// Description tells an admin, in a plan, what applying the change does to
// the daemons and the jobs.
func (c ChangeClass) Description() string {
	switch c {
	case NoChange:
		return "No Slurm daemon is touched."
	case Reconfigure:
		return "Applied with `scontrol reconfigure`: slurmctld and every slurmd re-read the files; running jobs continue."
	case RestartController:
		return "Needs a restart of slurmctld (`scontrol reconfigure` cannot change its listening settings or the state it " +
			"loads at start). Running jobs continue, but the controller does not answer for a few seconds. Changing " +
			"SelectType loses all job information, running and pending."
	case OrderedRestart:
		return "The node set changes, or a setting every daemon reads only at start (slurmd's port, authentication): " +
			"slurmctld is stopped, the files are written, slurmctld is started, and then slurmd restarts on every compute " +
			"node. Running jobs survive the restarts."
	}
	return c.String()
}

// controllerRestartKeys need slurmctld restarted: scontrol(1) reconfigure
// cannot change "the daemons' listening TCP port settings", SwitchType must be
// restarted, SelectType changes the state format. Older scontrol(1) pages also
// name PluginDir and StateSaveLocation, which slurmctld only reads at start;
// ClusterName is tied to the state in StateSaveLocation. slurmctld loads the
// accounting storage plugin and opens its connection to slurmdbd at start.
var controllerRestartKeys = keySet(`
	SlurmctldHost SlurmctldAddr ControlMachine ControlAddr BackupController BackupAddr SlurmctldPort
	SwitchType SelectType StateSaveLocation PluginDir ClusterName SlurmUser SlurmctldPidFile
	AccountingStorageType AccountingStorageHost AccountingStoragePort
`)

// allDaemonsRestartKeys are read by slurmctld and every slurmd at start only,
// so a change needs both restarted, in order: slurm.conf(5) on AuthType, "All
// Slurm daemons and commands must be terminated prior to changing the value";
// on SlurmdPort, slurmctld contacts the nodes there, so a slurmd still listening
// on the old port is unreachable until it restarts. CredType signs the job
// credentials slurmd verifies.
var allDaemonsRestartKeys = keySet(`
	SlurmdPort AuthType AuthAltTypes AuthAltParameters AuthInfo CredType CryptoType TLSType
`)

// keySet maps each key's lower-case form, the way Slurm compares keys, to its spelling.
func keySet(s string) map[string]string {
	set := map[string]string{}
	for _, k := range strings.Fields(s) {
		set[strings.ToLower(k)] = k
	}
	return set
}

// settingClass is the class of change that changing one slurm.conf setting needs.
func settingClass(lowerKey string) ChangeClass {
	switch {
	case allDaemonsRestartKeys[lowerKey] != "":
		return OrderedRestart
	case controllerRestartKeys[lowerKey] != "":
		return RestartController
	}
	return Reconfigure
}

// Files are the files the controller serves to configless nodes: the three configuration
// files and the job scripts, nil where there is none.
type Files struct {
	SlurmConf  []byte
	CgroupConf []byte
	GresConf   []byte
	Prolog     []byte
	Epilog     []byte
}

// Classification is a change's class, the settings that decided it, and
// for an ordered restart, the compute nodes whose slurmd must restart.
type Classification struct {
	Class        ChangeClass
	Reasons      []string
	RestartNodes []string
}

// Classify compares the files before and after a change. It reads the
// files themselves rather than the fragments, so a hand edit on the
// controller is classified by what the daemons actually run with.
func Classify(old, new Files) (Classification, error) {
	if len(old.SlurmConf) == 0 {
		return Classification{Class: RestartController, Reasons: []string{"slurm.conf is new"}}, nil
	}
	before, err := viewOf(old.SlurmConf)
	if err != nil {
		return Classification{}, fmt.Errorf("current slurm.conf: %w", err)
	}
	after, err := viewOf(new.SlurmConf)
	if err != nil {
		return Classification{}, fmt.Errorf("new slurm.conf: %w", err)
	}
	var c Classification
	raise := func(class ChangeClass, reason string) {
		c.Reasons = append(c.Reasons, reason)
		if class > c.Class {
			c.Class = class
		}
	}
	for _, key := range changedKeys(before.params, after.params) {
		name := after.names[key]
		if name == "" {
			name = before.names[key]
		}
		raise(settingClass(key), name+" changed")
	}
	for _, name := range changedKeys(before.nodes, after.nodes) {
		raise(OrderedRestart, "node "+name+" added, removed or changed")
	}
	for _, name := range changedKeys(before.partitions, after.partitions) {
		raise(Reconfigure, "partition "+name+" changed")
	}
	if !sameCgroupConf(old.CgroupConf, new.CgroupConf) {
		raise(Reconfigure, "cgroup.conf changed")
	}
	if !sameGresConf(old.GresConf, new.GresConf, union(slices.Collect(maps.Keys(before.nodes)), slices.Collect(maps.Keys(after.nodes)))) {
		raise(Reconfigure, "gres.conf changed")
	}
	// Configless slurmctld sends the scripts it read at its start or last reconfigure.
	if !bytes.Equal(old.Prolog, new.Prolog) {
		raise(Reconfigure, PrologFile+" changed")
	}
	if !bytes.Equal(old.Epilog, new.Epilog) {
		raise(Reconfigure, EpilogFile+" changed")
	}
	if c.Class == OrderedRestart {
		for name := range after.nodes {
			c.RestartNodes = append(c.RestartNodes, name)
		}
		sort.Strings(c.RestartNodes)
	}
	return c, nil
}

// changedKeys are the keys whose values differ, or that only one side has.
func changedKeys(a, b map[string]string) []string {
	var keys []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// confView is slurm.conf as the classification needs it: settings by lower-case key, node
// lines by node name and partition lines by partition name, DEFAULT lines merged into the
// lines they apply to, and attributes normalized so that order, key case and the form of a
// hostlist do not count as a change.
type confView struct {
	params     map[string]string
	names      map[string]string // lower-case key to the spelling in the file
	nodes      map[string]string
	partitions map[string]string
}

func viewOf(b []byte) (confView, error) {
	v := confView{params: map[string]string{}, names: map[string]string{}, nodes: map[string]string{}, partitions: map[string]string{}}
	c, err := ParseConf(b)
	if err != nil {
		return confView{}, err
	}
	for _, l := range c.Lines {
		lower := strings.ToLower(l.Key)
		switch {
		case lower == "nodename" || lower == "partitionname":
		case l.IsRecord():
			// NodeSet, DownNodes, FrontendName: one setting each, by name.
			key := lower + " " + l.Value
			v.params[key], v.names[key] = normalizeAttrs(l.Attrs), l.Key+"="+l.Value
		default:
			v.params[lower], v.names[lower] = l.Value, l.Key
		}
	}
	nodes, err := nodeRecords(c)
	if err != nil {
		return confView{}, err
	}
	for _, n := range nodes {
		v.nodes[n.name] = normalizeAttrs(n.attrs)
	}
	for _, p := range partitionRecords(c) {
		v.partitions[p.name] = normalizeAttrs(p.attrs)
	}
	return v, nil
}

// implicitAttrs are attributes whose value is Slurm's default, so writing them or not is
// the same: a node's State=UNKNOWN, a partition's Default=NO.
var implicitAttrs = map[string]bool{"state=unknown": true, "default=no": true}

// normalizeAttrs makes attribute order, key case, the case of yes/no and state values, and
// the form of a partition's node hostlist irrelevant.
func normalizeAttrs(pairs []ConfPair) string {
	out := make([]string, 0, len(pairs))
	for _, p := range pairs {
		k, val := strings.ToLower(p.Key), p.Value
		switch k {
		case "state", "default":
			val = strings.ToLower(val)
		case "nodes":
			if names, err := ExpandHostlist(val); err == nil {
				sort.Strings(names)
				val = strings.Join(names, ",")
			}
		}
		if w := k + "=" + val; !implicitAttrs[w] {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// sameCgroupConf compares two cgroup.conf files by the settings they make, so the form of a
// file written by hand does not count as a change; files that do not parse are compared
// byte by byte.
func sameCgroupConf(a, b []byte) bool {
	ca, errA := adoptCgroup(a)
	cb, errB := adoptCgroup(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(RenderCgroupConf(ca), RenderCgroupConf(cb))
}

// sameGresConf compares two gres.conf files by what each gives every node of nodes.
func sameGresConf(a, b []byte, nodes []string) bool {
	ga, errA := gresByNode(a, nodes)
	gb, errB := gresByNode(b, nodes)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	for _, n := range nodes {
		if strings.Join(ga[n], " | ") != strings.Join(gb[n], " | ") {
			return false
		}
	}
	return true
}
