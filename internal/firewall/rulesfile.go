package firewall

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Files UFW keeps its state in. The rule files hold one "### tuple ###" line
// per rule, which is UFW's own record of what was asked for; the iptables
// lines under it are derived from it.
const (
	RulesFile    = "/etc/ufw/user.rules"
	Rules6File   = "/etc/ufw/user6.rules"
	ConfFile     = "/etc/ufw/ufw.conf"
	DefaultsFile = "/etc/default/ufw"
)

const tuplePrefix = "### tuple ### "

// Tuple is one rule as UFW records it:
// ACTION PROTO DPORT DST SPORT SRC [DAPP SAPP] DIRECTION [comment=HEX].
type Tuple struct {
	Action, Proto, DPort, Dst, SPort, Src string
	DApp, SApp                            string
	Direction                             string
	Comment                               string
}

// ParseTuples reads the tuple lines of a user.rules or user6.rules file in
// file order, which is the order UFW evaluates them in.
func ParseTuples(content string) ([]Tuple, error) {
	var tuples []Tuple
	for i, line := range strings.Split(content, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), tuplePrefix)
		if !ok {
			continue
		}
		t, err := parseTuple(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		tuples = append(tuples, t)
	}
	return tuples, nil
}

func parseTuple(s string) (Tuple, error) {
	fields := strings.Fields(s)
	var t Tuple
	if last := fields[len(fields)-1]; strings.HasPrefix(last, "comment=") {
		raw, err := hex.DecodeString(strings.TrimPrefix(last, "comment="))
		if err != nil {
			return t, fmt.Errorf("tuple %q: comment is not hex: %w", s, err)
		}
		t.Comment = string(raw)
		fields = fields[:len(fields)-1]
	}
	switch len(fields) {
	case 7:
		t.Direction = fields[6]
	case 9:
		t.DApp, t.SApp, t.Direction = fields[6], fields[7], fields[8]
	default:
		return t, fmt.Errorf("tuple %q has %d fields, want 7 or 9", s, len(fields))
	}
	t.Action, t.Proto, t.DPort, t.Dst, t.SPort, t.Src = fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
	return t, nil
}

func isAnyAddr(a string) bool { return a == "0.0.0.0/0" || a == "::/0" }

// Rule is the tuple as a Rule when it has the shape the resources manage:
// allow or deny, incoming on every interface, to any local address and from
// any source port, without an application profile.
func (t Tuple) Rule() (Rule, bool) {
	if (t.Action != ActionAllow && t.Action != ActionDeny) || t.Direction != "in" ||
		!isAnyAddr(t.Dst) || t.SPort != "any" || t.DApp != "" {
		return Rule{}, false
	}
	from := t.Src
	if isAnyAddr(from) {
		from = FromAny
	}
	r, err := Rule{Action: t.Action, Port: t.DPort, Proto: t.Proto, From: from}.Normalize()
	if err != nil {
		return Rule{}, false
	}
	r.Comment = t.Comment
	return r, true
}

// Rules merges the IPv4 and IPv6 files into the managed rules, in file order.
// A rule from any source is in both files; it is listed once.
func Rules(v4, v6 []Tuple) []Rule {
	seen := map[string]bool{}
	var rules []Rule
	for _, t := range append(append([]Tuple{}, v4...), v6...) {
		r, ok := t.Rule()
		if !ok || seen[r.Key()] {
			continue
		}
		seen[r.Key()] = true
		rules = append(rules, r)
	}
	return rules
}

// Find returns the rule with key's identity, comment included.
func Find(rules []Rule, key string) (Rule, bool) {
	for _, r := range rules {
		if r.Key() == key {
			return r, true
		}
	}
	return Rule{}, false
}
