package slurm

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Conf is a slurm.conf, cgroup.conf or gres.conf as Slurm's parser reads it: one Line per
// logical line, in the file's order. The package's one reader of these files, so the
// classification of a change, the adoption of hand-written files and the firewall's checks
// cannot read one file two ways.
type Conf struct {
	Lines   []ConfLine
	records map[string]string
}

// ConfLine is one logical line. A line whose first key names a record (NodeName,
// PartitionName, NodeSet, DownNodes, FrontendName in slurm.conf, NodeName or Name in
// gres.conf) is a record: Key and Value are that first pair and Attrs the rest. Any other
// line holds settings only, each pair its own: Slurm reads "SlurmdPort=6819
// SrunPortRange=50000-50100" as two settings.
type ConfLine struct {
	// Number is the line's number in the file, for messages.
	Number int
	Key    string
	Value  string
	Attrs  []ConfPair
	record bool
}

// ConfPair is one key=value pair, the key as the file spells it.
type ConfPair struct{ Key, Value string }

// recordKeys start a line whose other pairs belong to it, by lower-case key: slurm.conf's
// records, and gres.conf's, where a line names its nodes or its resource first.
var (
	recordKeys     = keySet("NodeName PartitionName NodeSet DownNodes FrontendName")
	gresRecordKeys = keySet("NodeName Name")
)

// ParseConf reads slurm.conf or cgroup.conf the way Slurm does: "#" starts a comment, a
// backslash at the end of a line continues it, keys are case-insensitive, and a value in
// double quotes may hold whitespace. A word that is not key=value is an error.
func ParseConf(content []byte) (Conf, error) {
	return parseConf(content, recordKeys)
}

// ParseGresConf reads gres.conf, whose lines start with NodeName= or Name=, or set
// AutoDetect for every node.
func ParseGresConf(content []byte) (Conf, error) {
	return parseConf(content, gresRecordKeys)
}

func parseConf(content []byte, records map[string]string) (Conf, error) {
	c := Conf{records: records}
	sc := bufio.NewScanner(bytes.NewReader(content))
	var pending string
	start, n := 0, 0
	for sc.Scan() {
		n++
		text, _, _ := strings.Cut(sc.Text(), "#")
		if pending == "" {
			start = n
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(text, " \t\r"), `\`); ok {
			pending += cont + " "
			continue
		}
		line := pending + text
		pending = ""
		if err := c.add(start, line); err != nil {
			return Conf{}, err
		}
	}
	if err := sc.Err(); err != nil {
		return Conf{}, err
	}
	if pending != "" {
		if err := c.add(start, pending); err != nil {
			return Conf{}, err
		}
	}
	return c, nil
}

func (c *Conf) add(number int, line string) error {
	words, err := confWords(line)
	if err != nil {
		return fmt.Errorf("line %d: %w", number, err)
	}
	if len(words) == 0 {
		return nil
	}
	pairs := make([]ConfPair, len(words))
	for i, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return fmt.Errorf("line %d: %q is not key=value", number, w)
		}
		pairs[i] = ConfPair{Key: k, Value: v}
	}
	if c.records[strings.ToLower(pairs[0].Key)] != "" {
		c.Lines = append(c.Lines, ConfLine{Number: number, Key: pairs[0].Key, Value: pairs[0].Value, Attrs: pairs[1:], record: true})
		return nil
	}
	for _, p := range pairs {
		c.Lines = append(c.Lines, ConfLine{Number: number, Key: p.Key, Value: p.Value})
	}
	return nil
}

// confWords splits a line at whitespace outside double quotes, and drops the quotes.
func confWords(line string) ([]string, error) {
	var words []string
	var b strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '\r'):
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unbalanced double quote in %q", strings.TrimSpace(line))
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}

// IsRecord reports whether the line is a record (NodeName=..., PartitionName=...) rather than
// a setting.
func (l ConfLine) IsRecord() bool { return l.record }

// Setting is the value of the last setting called key, in any case, as Slurm takes the last
// one; ok is false when the file does not set it.
func (c Conf) Setting(key string) (value string, ok bool) {
	for _, l := range c.Lines {
		if !l.record && strings.EqualFold(l.Key, key) {
			value, ok = l.Value, true
		}
	}
	return value, ok
}

// Records are the record lines whose key is key, in any case, in the file's order.
func (c Conf) Records(key string) []ConfLine {
	var out []ConfLine
	for _, l := range c.Lines {
		if l.record && strings.EqualFold(l.Key, key) {
			out = append(out, l)
		}
	}
	return out
}
