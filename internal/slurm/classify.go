package slurm

import (
	"bufio"
	"bytes"
	"fmt"
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

// Files are the three files the controller serves to configless nodes.
type Files struct {
	SlurmConf  []byte
	CgroupConf []byte
	GresConf   []byte
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
	before, err := parseConf(old.SlurmConf)
	if err != nil {
		return Classification{}, fmt.Errorf("current slurm.conf: %w", err)
	}
	after, err := parseConf(new.SlurmConf)
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
	if !bytes.Equal(old.CgroupConf, new.CgroupConf) {
		raise(Reconfigure, "cgroup.conf changed")
	}
	if !bytes.Equal(old.GresConf, new.GresConf) {
		raise(Reconfigure, "gres.conf changed")
	}
	if c.Class == OrderedRestart {
		for name := range after.nodes {
			if name == defaultsLine {
				continue
			}
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

// defaultsLine keys a NodeName=DEFAULT line among the nodes: no node can
// be called that, as a name with a space is not a hostname.
const defaultsLine = "NodeName DEFAULT"

// confView is slurm.conf as the classification needs it: settings by
// lower-case key, and node and partition lines by name.
type confView struct {
	params     map[string]string
	names      map[string]string // lower-case key to the spelling in the file
	nodes      map[string]string
	partitions map[string]string
}

func parseConf(b []byte) (confView, error) {
	v := confView{params: map[string]string{}, names: map[string]string{}, nodes: map[string]string{}, partitions: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		key, value, ok := strings.Cut(fields[0], "=")
		if !ok {
			return confView{}, fmt.Errorf("line %q: want key=value", line)
		}
		if err := v.add(key, value, fields[1:]); err != nil {
			return confView{}, err
		}
	}
	return v, sc.Err()
}

func (v *confView) add(key, value string, rest []string) error {
	attrs := normalizeAttrs(rest)
	switch lower := strings.ToLower(key); {
	case lower == "nodename" && !strings.EqualFold(value, "DEFAULT"):
		names, err := ExpandHostlist(value)
		if err != nil {
			return err
		}
		for _, n := range names {
			v.nodes[n] = attrs
		}
	case lower == "partitionname" && !strings.EqualFold(value, "DEFAULT"):
		v.partitions[value] = attrs
	default:
		// Defaults lines and settings: a change in a NodeName=DEFAULT line
		// changes node hardware, so it counts as a node change below.
		if lower == "nodename" {
			v.nodes[defaultsLine] = attrs
			return nil
		}
		v.params[lower] = strings.TrimSpace(value + " " + attrs)
		v.names[lower] = key
	}
	return nil
}

// normalizeAttrs makes attribute order and key case irrelevant.
func normalizeAttrs(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		k, val, _ := strings.Cut(w, "=")
		out[i] = strings.ToLower(k) + "=" + val
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
