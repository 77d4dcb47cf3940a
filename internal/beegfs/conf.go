package beegfs

import (
	"bytes"
	"fmt"
	"strings"
)

// Conf is a BeeGFS daemon or client config file (beegfs-storage.conf,
// beegfs-meta.conf, beegfs-client.conf): "key = value" lines, full-line
// comments starting with '#', blank lines. It is edited in place, the way
// the setup scripts edit it with sed: a changed key keeps its line, its
// alignment and its neighbours; everything else is written back byte for
// byte.
type Conf struct {
	lines []confLine
	// trailingNewline remembers whether the file ended with one, so an
	// untouched file renders identically.
	trailingNewline bool
}

type confLine struct {
	raw string
	// key is empty for comments and blank lines.
	key string
	// prefix is everything up to and including '=', kept when the value
	// changes so the file's column alignment survives.
	prefix string
	value  string
}

// ParseConf reads a config file. A key set twice is refused: BeeGFS would
// silently use one of them, and for the interlock keys a reader must not
// guess which.
func ParseConf(content []byte) (*Conf, error) {
	text := string(content)
	c := &Conf{trailingNewline: strings.HasSuffix(text, "\n")}
	if text == "" {
		return c, nil
	}
	seen := map[string]int{}
	for i, raw := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		line, err := parseConfLine(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if line.key != "" {
			if first, dup := seen[line.key]; dup {
				return nil, fmt.Errorf("line %d: %s is already set on line %d", i+1, line.key, first)
			}
			seen[line.key] = i + 1
		}
		c.lines = append(c.lines, line)
	}
	return c, nil
}

func parseConfLine(raw string) (confLine, error) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return confLine{raw: raw}, nil
	}
	eq := strings.IndexByte(raw, '=')
	if eq < 0 {
		return confLine{}, fmt.Errorf("%q is neither a comment nor key = value", raw)
	}
	key := strings.TrimSpace(raw[:eq])
	if key == "" || strings.ContainsAny(key, " \t") {
		return confLine{}, fmt.Errorf("%q has no valid key before '='", raw)
	}
	return confLine{raw: raw, key: key, prefix: raw[:eq+1], value: strings.TrimSpace(raw[eq+1:])}, nil
}

// Get returns a key's value with surrounding blanks removed.
func (c *Conf) Get(key string) (value string, ok bool) {
	for _, l := range c.lines {
		if l.key == key {
			return l.value, true
		}
	}
	return "", false
}

// Set gives key a value, on its existing line when there is one, else on a
// new line at the end. An empty value renders as "key =", the form BeeGFS's
// own files use for "unset".
func (c *Conf) Set(key, value string) error {
	if err := checkConfToken("key", key); err != nil {
		return err
	}
	if key == "" || strings.ContainsAny(key, " \t=#") {
		return fmt.Errorf("key %q must be non-empty without blanks, '=' or '#'", key)
	}
	if err := checkConfToken("value of "+key, value); err != nil {
		return err
	}
	for i, l := range c.lines {
		if l.key == key {
			c.lines[i] = withValue(l, value)
			return nil
		}
	}
	c.lines = append(c.lines, withValue(confLine{key: key, prefix: key + " ="}, value))
	c.trailingNewline = true
	return nil
}

func withValue(l confLine, value string) confLine {
	l.value = value
	l.raw = l.prefix
	if value != "" {
		l.raw += " " + value
	}
	return l
}

// checkConfToken refuses what would change the file's structure: a line
// break would start a new line, and surrounding blanks would not survive a
// round trip.
func checkConfToken(what, s string) error {
	if strings.ContainsAny(s, "\n\r\x00") {
		return fmt.Errorf("%s must be a single line", what)
	}
	if s != strings.TrimSpace(s) {
		return fmt.Errorf("%s %q has leading or trailing blanks", what, s)
	}
	return nil
}

// Bytes renders the file.
func (c *Conf) Bytes() []byte {
	var b bytes.Buffer
	for i, l := range c.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.raw)
	}
	if c.trailingNewline && len(c.lines) > 0 {
		b.WriteByte('\n')
	}
	return b.Bytes()
}
