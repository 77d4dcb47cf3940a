package nodes

import (
	"strconv"
	"strings"
)

// ParseOSRelease reads os-release(5) KEY=value lines. Values may be quoted
// with single or double quotes in shell style; unquoting follows the
// specification's subset (backslash escapes inside double quotes).
func ParseOSRelease(content string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[key] = unquoteOSRelease(value)
	}
	return out
}

func unquoteOSRelease(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
		return v[1 : len(v)-1]
	}
	return v
}
