package nodes

import (
	"regexp"
	"strings"
)

// gpuLine matches a physical GPU in `nvidia-smi -L`; MIG instances are
// indented lines below it and are not counted.
var gpuLine = regexp.MustCompile(`^GPU \d+: (.+?) \(UUID: [^)]*\)\s*$`)

// ParseNvidiaSMIList returns the GPU names listed by `nvidia-smi -L`.
// "No devices were found" yields none.
func ParseNvidiaSMIList(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if m := gpuLine.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// nvidia-smi's exit status when it finds no GPU.
const nvidiaSMINoDevices = 6
