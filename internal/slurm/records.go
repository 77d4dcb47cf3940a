package slurm

import (
	"fmt"
	"strings"
)

// record is one node or partition of slurm.conf with the attributes Slurm gives it: those of
// the DEFAULT lines before it, overridden by its own. A NodeName line with a hostlist is one
// record per node, each with its own NodeAddr and NodeHostname when those list one per node.
type record struct {
	name  string
	line  int
	attrs []ConfPair
}

// perNodeKeys take one value per node of a NodeName hostlist, in order.
var perNodeKeys = keySet("NodeAddr NodeHostname")

// definedLines are the lines of one kind of record (NodeName, PartitionName) but its DEFAULT
// lines, each with the attributes of the DEFAULT lines above it under its own, in the file's order.
func definedLines(c Conf, kind string) []ConfLine {
	var defaults []ConfPair
	var out []ConfLine
	for _, l := range c.Records(kind) {
		if strings.EqualFold(l.Value, "DEFAULT") {
			defaults = mergePairs(defaults, l.Attrs)
			continue
		}
		l.Attrs = mergePairs(defaults, l.Attrs)
		out = append(out, l)
	}
	return out
}

// nodeRecords are slurm.conf's nodes, one record per node name, in the file's order.
func nodeRecords(c Conf) ([]record, error) {
	var out []record
	for _, l := range definedLines(c, "NodeName") {
		names, err := ExpandHostlist(l.Value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.Number, err)
		}
		attrs := l.Attrs
		split := map[string][]string{}
		for _, a := range attrs {
			if perNodeKeys[strings.ToLower(a.Key)] == "" || len(names) == 1 {
				continue
			}
			values, err := ExpandHostlist(a.Value)
			if err != nil || len(values) != len(names) {
				return nil, fmt.Errorf("line %d: %s=%s does not list one value for each of the %d nodes of %s", l.Number, a.Key, a.Value, len(names), l.Value)
			}
			split[strings.ToLower(a.Key)] = values
		}
		for i, name := range names {
			own := make([]ConfPair, len(attrs))
			for j, a := range attrs {
				if values, ok := split[strings.ToLower(a.Key)]; ok {
					a.Value = values[i]
				}
				own[j] = a
			}
			out = append(out, record{name: name, line: l.Number, attrs: own})
		}
	}
	return out, nil
}

// partitionRecords are slurm.conf's partitions, in the file's order.
func partitionRecords(c Conf) []record {
	var out []record
	for _, l := range definedLines(c, "PartitionName") {
		out = append(out, record{name: l.Value, line: l.Number, attrs: l.Attrs})
	}
	return out
}

// mergePairs is base with over's pairs replacing those of the same key, in any case.
func mergePairs(base, over []ConfPair) []ConfPair {
	out := append([]ConfPair(nil), base...)
	for _, p := range over {
		replaced := false
		for i := range out {
			if strings.EqualFold(out[i].Key, p.Key) {
				out[i], replaced = p, true
			}
		}
		if !replaced {
			out = append(out, p)
		}
	}
	return out
}
