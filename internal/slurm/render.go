package slurm

import (
	"bytes"
	"sort"
	"strings"
)

// header starts every file the package renders, so an admin who opens one
// learns where its content comes from before editing it in vain.
const header = "# Managed by terraform-provider-gpucluster: do not edit, changes are overwritten.\n" +
	"# Assembled from the fragments in " + FragmentDir + "/ (one per resource).\n"

// RenderSlurmConf writes slurm.conf in the guide's order: the typed settings
// in its four paragraphs, then Extra, then one NodeName line per set of
// nodes with equal hardware, then one PartitionName line per partition.
func RenderSlurmConf(c ControllerSettings, nodes []NodeDef, partitions []PartitionDef) []byte {
	var paragraphs [][]string
	for _, g := range c.groups() {
		paragraphs = append(paragraphs, settingWords(g))
	}
	paragraphs = append(paragraphs, settingWords(extraSettings(c.Extra)), nodeLines(nodes), partitionLines(partitions))
	return joinParagraphs(paragraphs)
}

// RenderCgroupConf writes cgroup.conf.
func RenderCgroupConf(c CgroupSettings) []byte {
	return joinParagraphs([][]string{settingWords(c.settings()), settingWords(extraSettings(c.Extra))})
}

// RenderGresConf writes gres.conf. When no node lists its GPU files it is
// the guide's single line, AutoDetect=nvml; otherwise each set of nodes gets
// its own line, explicit File= for nodes that list files (fake GPUs, or a
// node without the NVML plugin) and AutoDetect=nvml for the rest.
func RenderGresConf(nodes []NodeDef) []byte {
	groups := map[string][]string{}
	explicit := false
	for _, n := range nodes {
		typ, ok := gpuGres(n.Gres)
		if !ok {
			continue
		}
		if n.GPUFiles == "" {
			groups["AutoDetect=nvml"] = append(groups["AutoDetect=nvml"], n.Name)
			continue
		}
		explicit = true
		attrs := "Name=gpu"
		if typ != "" {
			attrs += " Type=" + typ
		}
		attrs += " File=" + n.GPUFiles
		groups[attrs] = append(groups[attrs], n.Name)
	}
	if !explicit {
		if len(groups) == 0 {
			return []byte(header)
		}
		return joinParagraphs([][]string{{"AutoDetect=nvml"}})
	}
	return joinParagraphs([][]string{hostlistLines("NodeName", groups)})
}

// gpuGres finds the gpu entry of a Gres= value ("gpu:4", "gpu:a100:4",
// "gpu:4,nic:1") and its type, if it names one.
func gpuGres(gres string) (typ string, ok bool) {
	for _, entry := range strings.Split(gres, ",") {
		fields := strings.Split(entry, ":")
		if fields[0] != "gpu" {
			continue
		}
		if len(fields) == 3 {
			return fields[1], true
		}
		return "", true
	}
	return "", false
}

// nodeLines merges nodes whose line would be the same apart from the name.
func nodeLines(nodes []NodeDef) []string {
	groups := map[string][]string{}
	for _, n := range nodes {
		attrs := strings.Join(settingWords(append(n.hardware(), extraSettings(n.Extra)...)), " ")
		groups[attrs] = append(groups[attrs], n.Name)
	}
	return hostlistLines("NodeName", groups)
}

func partitionLines(partitions []PartitionDef) []string {
	sorted := append([]PartitionDef(nil), partitions...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	lines := make([]string, len(sorted))
	for i, p := range sorted {
		words := append([]string{"PartitionName=" + p.Name}, settingWords(append(p.settings(), extraSettings(p.Extra)...))...)
		lines[i] = strings.Join(words, " ")
	}
	return lines
}

// hostlistLines writes "key=<hostlist> attrs" per group, sorted.
func hostlistLines(key string, groups map[string][]string) []string {
	lines := make([]string, 0, len(groups))
	for attrs, names := range groups {
		line := key + "=" + CompressHostlist(names)
		if attrs != "" {
			line += " " + attrs
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return lines
}

// settingWords are "key=value" words for the settings that have a value.
func settingWords(settings []setting) []string {
	var words []string
	for _, s := range settings {
		if s.value != "" {
			words = append(words, s.key+"="+s.value)
		}
	}
	return words
}

// joinParagraphs writes the header, then the non-empty paragraphs separated
// by blank lines.
func joinParagraphs(paragraphs [][]string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, p := range paragraphs {
		if len(p) == 0 {
			continue
		}
		b.WriteString("\n")
		for _, line := range p {
			b.WriteString(line)
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}
