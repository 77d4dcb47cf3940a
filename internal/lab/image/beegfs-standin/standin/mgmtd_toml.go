package main

// STAND-IN: the small part of TOML that beegfs-mgmtd.toml uses (comments,
// tables, strings, integers, booleans, arrays), parsed the way the real
// service's toml crate reports errors: a line and column, the line itself,
// and what was wrong, so that a file the real parser refuses is refused here.

import (
	"fmt"
	"strconv"
	"strings"
)

// tomlEntry is one key = value line, with where it sits for error reports.
type tomlEntry struct {
	Table string // "" for the top level
	Key   string
	Value any // string, int64, bool or []any
	Line  int // 1-based
	Col   int // 1-based column of the key
	Text  string
	// ValueCol is the 1-based column of the value.
	ValueCol int
}

// tomlError is a parse or type error at a place in the file.
type tomlError struct {
	Line, Col, Width int
	Text, Msg        string
}

func (e *tomlError) Error() string {
	num := strconv.Itoa(e.Line)
	pad := strings.Repeat(" ", len(num))
	width := max(e.Width, 1)
	return fmt.Sprintf("TOML parse error at line %d, column %d\n%s |\n%s | %s\n%s | %s%s\n%s",
		e.Line, e.Col, pad, num, e.Text, pad, strings.Repeat(" ", e.Col-1), strings.Repeat("^", width), e.Msg)
}

// parseTOML reads the entries of a document, in order.
func parseTOML(doc string) ([]tomlEntry, error) {
	lines := strings.Split(doc, "\n")
	var out []tomlEntry
	table := ""
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		raw := strings.TrimRight(lines[i], "\r")
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		col := strings.Index(raw, line) + 1
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") || strings.HasPrefix(line, "[[") {
				return nil, &tomlError{Line: i + 1, Col: col, Width: len(line), Text: raw, Msg: "invalid table header"}
			}
			table = strings.TrimSpace(line[1 : len(line)-1])
			if !bareKey(table) {
				return nil, &tomlError{Line: i + 1, Col: col, Width: len(line), Text: raw, Msg: "invalid table header"}
			}
			if seen["["+table] {
				return nil, &tomlError{Line: i + 1, Col: col, Width: len(line), Text: raw, Msg: fmt.Sprintf("invalid table header\nduplicate key `%s` in document root", table)}
			}
			seen["["+table] = true
			continue
		}
		eq := strings.Index(line, "=")
		if eq < 0 {
			return nil, &tomlError{Line: i + 1, Col: col + len(line), Text: raw, Msg: "expected `.`, `=`"}
		}
		key := strings.TrimSpace(line[:eq])
		if !bareKey(key) {
			return nil, &tomlError{Line: i + 1, Col: col, Width: len(key), Text: raw, Msg: "invalid key"}
		}
		valueText := strings.TrimSpace(line[eq+1:])
		valueCol := strings.Index(raw[col-1+eq+1:], valueText) + col + eq + 1
		// An array may go on over the next lines.
		for strings.HasPrefix(valueText, "[") && !arrayClosed(valueText) && i+1 < len(lines) {
			i++
			valueText += " " + strings.TrimSpace(stripComment(lines[i]))
		}
		value, err := parseTOMLValue(valueText)
		if err != nil {
			return nil, &tomlError{Line: i + 1, Col: valueCol, Width: len(valueText), Text: raw, Msg: err.Error()}
		}
		full := table + "." + key
		if seen[full] {
			return nil, &tomlError{Line: i + 1, Col: col, Width: len(key), Text: raw, Msg: fmt.Sprintf("duplicate key `%s`", key)}
		}
		seen[full] = true
		out = append(out, tomlEntry{Table: table, Key: key, Value: value, Line: i + 1, Col: col, Text: raw, ValueCol: valueCol})
	}
	return out, nil
}

func bareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// stripComment cuts a # comment that is not inside a string.
func stripComment(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0 && r == quote && !(quote == '"' && escaped(s, i)):
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == '#':
			return s[:i]
		}
	}
	return s
}

func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func arrayClosed(s string) bool {
	depth := 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote && !(quote == '"' && escaped(s, i)) {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[':
			depth++
		case r == ']':
			depth--
		}
	}
	return depth <= 0
}

// parseTOMLValue reads one value and refuses anything after it.
func parseTOMLValue(s string) (any, error) {
	v, rest, err := tomlValue(s)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(rest) != "" {
		return nil, fmt.Errorf("expected newline, `#`")
	}
	return v, nil
}

func tomlValue(s string) (any, string, error) {
	s = strings.TrimLeft(s, " \t")
	switch {
	case s == "":
		return nil, "", fmt.Errorf("string values must be quoted, expected literal string")
	case strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, "'''"):
		return nil, "", fmt.Errorf("multi-line strings are not supported by the stand-in")
	case s[0] == '"':
		return basicString(s)
	case s[0] == '\'':
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return nil, "", fmt.Errorf("invalid literal string")
		}
		return s[1 : end+1], s[end+2:], nil
	case s[0] == '[':
		return tomlArray(s)
	case s[0] == '{':
		return nil, "", fmt.Errorf("inline tables are not supported by the stand-in")
	}
	end := strings.IndexAny(s, " \t,]")
	if end < 0 {
		end = len(s)
	}
	word, rest := s[:end], s[end:]
	switch word {
	case "true":
		return true, rest, nil
	case "false":
		return false, rest, nil
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(word, "_", ""), 0, 64)
	if err != nil || strings.HasPrefix(word, "_") || strings.HasSuffix(word, "_") {
		return nil, "", fmt.Errorf("string values must be quoted, expected literal string")
	}
	return n, rest, nil
}

func basicString(s string) (any, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 >= len(s) {
				return nil, "", fmt.Errorf("invalid basic string")
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(s[i])
			case 'u':
				if i+4 >= len(s) {
					return nil, "", fmt.Errorf("invalid unicode 4-digit hex code")
				}
				r, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
				if err != nil {
					return nil, "", fmt.Errorf("invalid unicode 4-digit hex code")
				}
				b.WriteRune(rune(r))
				i += 4
			default:
				return nil, "", fmt.Errorf("invalid escape sequence")
			}
		default:
			b.WriteByte(c)
		}
	}
	return nil, "", fmt.Errorf("invalid basic string")
}

func tomlArray(s string) (any, string, error) {
	rest := strings.TrimLeft(s[1:], " \t")
	items := []any{}
	for {
		if strings.HasPrefix(rest, "]") {
			return items, rest[1:], nil
		}
		v, r, err := tomlValue(rest)
		if err != nil {
			return nil, "", err
		}
		items = append(items, v)
		rest = strings.TrimLeft(r, " \t")
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimLeft(rest[1:], " \t")
			continue
		}
		if !strings.HasPrefix(rest, "]") {
			return nil, "", fmt.Errorf("invalid array\nexpected `]`")
		}
	}
}
