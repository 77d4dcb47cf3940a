package nodes

import (
	"fmt"
	"strconv"
	"strings"
)

// Batched scripts print each command's output between a header line and a
// status line, so one round trip can carry many commands and a missing
// account (getent status 2) is told apart from a broken command.
const (
	sectionPrefix = "@@gpucluster "
	statusPrefix  = "@@rc "
)

type section struct {
	lines  []string
	status int
}

// parseSections reads "@@gpucluster <key>" ... "@@rc <n>" blocks. Blank lines
// are dropped: the scripts add a newline before each status line in case a
// command's output did not end with one.
func parseSections(out []byte) (map[string]section, error) {
	sections := map[string]section{}
	var key string
	var cur *section
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, sectionPrefix):
			key = strings.TrimPrefix(line, sectionPrefix)
			cur = &section{}
		case strings.HasPrefix(line, statusPrefix):
			if cur == nil {
				return nil, fmt.Errorf("status line %q outside a section", line)
			}
			status, err := strconv.Atoi(strings.TrimPrefix(line, statusPrefix))
			if err != nil {
				return nil, fmt.Errorf("section %q: bad status line %q", key, line)
			}
			cur.status = status
			sections[key] = *cur
			cur = nil
		case cur != nil && line != "":
			cur.lines = append(cur.lines, line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("section %q has no status line: output truncated", key)
	}
	return sections, nil
}
