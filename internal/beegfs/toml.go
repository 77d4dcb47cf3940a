package beegfs

import (
	"fmt"
	"regexp"
	"strings"
)

// The 8.x management service reads TOML (confirmed: beegfs-mgmtd.toml, and
// the guide's db-file = "/beegfs/mgmtd/mgmtd.sqlite"). Only what the
// provider needs is handled here: one top-level string key, read and set,
// with every other byte of the file kept. A full TOML parser would be a new
// dependency for a single setting.

// tomlBareKey is the TOML bare key syntax; dotted and quoted keys are not
// needed for beegfs-mgmtd.toml's top-level settings.
var tomlBareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// SetTOMLString sets a top-level string key. An existing active line is
// rewritten in place. Otherwise the key goes where an admin would uncomment
// it: right after its commented-out default (the shipped file has every
// setting so); else after the last top-level setting; else before the first
// table header, active or commented out, so that uncommenting a table later
// never moves the key into it (the management service ignores unknown keys
// inside its cap-pool tables, so db-file would silently fall back to its
// default).
func SetTOMLString(content []byte, key, value string) ([]byte, error) {
	if !tomlBareKey.MatchString(key) {
		return nil, fmt.Errorf("TOML key %q is not a bare key", key)
	}
	quoted, err := tomlQuote(value)
	if err != nil {
		return nil, fmt.Errorf("value of %s: %w", key, err)
	}
	lines := splitLines(string(content))
	afterComment, afterLast := -1, -1
	for i, line := range lines {
		if isTOMLTableHeader(line) {
			break
		}
		if prefix, _, ok := tomlAssignment(line, key); ok {
			lines[i] = prefix + " " + quoted
			return joinLines(lines), nil
		}
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			afterLast = i + 1
		} else if _, _, ok := tomlAssignment(strings.TrimPrefix(t, "#"), key); ok && afterComment < 0 && !commentedTableAbove(lines[:i]) {
			afterComment = i + 1
		}
	}
	insertAt := afterComment
	if insertAt < 0 {
		insertAt = afterLast
	}
	if insertAt < 0 {
		insertAt = topLevelEnd(lines)
	}
	added := key + " = " + quoted
	lines = append(lines[:insertAt], append([]string{added}, lines[insertAt:]...)...)
	return joinLines(lines), nil
}

// commentedTableAbove reports a commented-out table header among lines.
func commentedTableAbove(lines []string) bool {
	for _, l := range lines {
		if isCommentedTableHeader(l) {
			return true
		}
	}
	return false
}

func isCommentedTableHeader(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "#") && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(t, "#")), "[")
}

// GetTOMLString reads a top-level string key; ok is false when the key is
// absent or only present in a comment.
func GetTOMLString(content []byte, key string) (value string, ok bool, err error) {
	for _, line := range splitLines(string(content)) {
		if isTOMLTableHeader(line) {
			return "", false, nil
		}
		if _, rest, found := tomlAssignment(line, key); found {
			v, err := tomlUnquote(rest)
			if err != nil {
				return "", false, fmt.Errorf("%s: %w", key, err)
			}
			return v, true, nil
		}
	}
	return "", false, nil
}

// topLevelEnd is where the top-level part ends: before the first table
// header and the blank lines above it, or before the empty element of a
// trailing newline.
func topLevelEnd(lines []string) int {
	end := len(lines)
	for i, line := range lines {
		if isTOMLTableHeader(line) || isCommentedTableHeader(line) {
			end = i
			break
		}
	}
	for end > 0 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return end
}

func isTOMLTableHeader(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "[")
}

// tomlAssignment splits an active "key = rest" line for the given key.
func tomlAssignment(line, key string) (prefix, rest string, ok bool) {
	eq := strings.IndexByte(line, '=')
	if eq < 0 || strings.TrimSpace(line[:eq]) != key {
		return "", "", false
	}
	return line[:eq+1], strings.TrimSpace(line[eq+1:]), true
}

// tomlQuote writes a TOML basic string. Control characters are refused
// rather than escaped: no path the provider writes contains one.
func tomlQuote(s string) (string, error) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q contains a control character", s)
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`, nil
}

// tomlUnquote reads a basic or literal string, with an optional trailing
// comment.
func tomlUnquote(rest string) (string, error) {
	if strings.HasPrefix(rest, "'") {
		end := strings.IndexByte(rest[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated literal string %s", rest)
		}
		return rest[1 : end+1], checkTOMLTail(rest[end+2:])
	}
	if !strings.HasPrefix(rest, `"`) {
		return "", fmt.Errorf("%s is not a string", rest)
	}
	var b strings.Builder
	for i := 1; i < len(rest); i++ {
		switch c := rest[i]; c {
		case '"':
			return b.String(), checkTOMLTail(rest[i+1:])
		case '\\':
			if i+1 == len(rest) || !strings.ContainsRune(`\"`, rune(rest[i+1])) {
				return "", fmt.Errorf("unsupported escape in %s", rest)
			}
			i++
			b.WriteByte(rest[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("unterminated string %s", rest)
}

func checkTOMLTail(tail string) error {
	tail = strings.TrimSpace(tail)
	if tail != "" && !strings.HasPrefix(tail, "#") {
		return fmt.Errorf("unexpected %q after the string", tail)
	}
	return nil
}

// splitLines keeps a final empty element for a trailing newline, so
// joinLines restores the file exactly.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func joinLines(lines []string) []byte {
	out := strings.Join(lines, "\n")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out)
}
