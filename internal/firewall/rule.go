package firewall

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Actions and protocols the resources manage. UFW's limit and reject, route
// rules, outgoing rules and application profiles are read but left alone.
const (
	ActionAllow = "allow"
	ActionDeny  = "deny"
	ProtoTCP    = "tcp"
	ProtoUDP    = "udp"
	ProtoAny    = "any"
	FromAny     = "any"
)

// Actions and Protos are the accepted values, in the order the docs list them.
var (
	Actions = []string{ActionAllow, ActionDeny}
	Protos  = []string{ProtoTCP, ProtoUDP, ProtoAny}
)

// Rule is one incoming rule to any local address: action, destination port
// or range, protocol and source. Comment is not part of its identity.
type Rule struct {
	Action  string
	Port    string
	Proto   string
	From    string
	Comment string
}

// FieldError names the rule field a value is wrong in, so a caller can point
// at its own attribute.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

var portPattern = regexp.MustCompile(`^([0-9]{1,5})(?::([0-9]{1,5}))?$`)

// Normalize validates r and returns it in canonical form: ports without
// leading zeros, a CIDR with its host bits cleared (as UFW stores it), a
// single-address CIDR as the bare address, "any" for the whole Internet.
func (r Rule) Normalize() (Rule, error) {
	var errs []error
	n := r
	if n.Action == "" {
		n.Action = ActionAllow
	}
	if n.Action != ActionAllow && n.Action != ActionDeny {
		errs = append(errs, fieldErr("action", "%q is not one of %s", r.Action, strings.Join(Actions, ", ")))
	}
	proto, err := normalizeProto(r.Proto)
	if err != nil {
		errs = append(errs, err)
	}
	n.Proto = proto
	port, isRange, err := normalizePort(r.Port)
	if err != nil {
		errs = append(errs, err)
	}
	n.Port = port
	if isRange && proto == ProtoAny {
		errs = append(errs, fieldErr("proto", "port range %s needs proto tcp or udp: UFW refuses a range with proto any (declare one rule per protocol)", port))
	}
	from, err := NormalizeFrom(r.From)
	if err != nil {
		errs = append(errs, err)
	}
	n.From = from
	if err := ValidateComment(r.Comment); err != nil {
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

func normalizeProto(p string) (string, error) {
	switch p {
	case ProtoTCP, ProtoUDP, ProtoAny:
		return p, nil
	case "":
		return ProtoTCP, nil
	}
	return p, fieldErr("proto", "%q is not one of %s", p, strings.Join(Protos, ", "))
}

// normalizePort accepts "22" or "60001:61000" with ports 1-65535 and the
// range in ascending order.
func normalizePort(p string) (string, bool, error) {
	m := portPattern.FindStringSubmatch(p)
	if m == nil {
		return p, false, fieldErr("port", "%q is not a port (\"22\") or a range (\"60001:61000\")", p)
	}
	lo, err := portNumber(m[1])
	if err != nil {
		return p, false, err
	}
	if m[2] == "" {
		return strconv.Itoa(lo), false, nil
	}
	hi, err := portNumber(m[2])
	if err != nil {
		return p, true, err
	}
	if lo >= hi {
		return p, true, fieldErr("port", "range %q is reversed or empty: write the lower port first (\"%d:%d\")", p, min(lo, hi), max(lo, hi))
	}
	return fmt.Sprintf("%d:%d", lo, hi), true, nil
}

func portNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fieldErr("port", "%s is out of range: ports are 1 to 65535", s)
	}
	return n, nil
}

// NormalizeFrom accepts "any", an IPv4 or IPv6 address, or a CIDR.
func NormalizeFrom(from string) (string, error) {
	if from == "" || from == FromAny {
		return FromAny, nil
	}
	if strings.Contains(from, "/") {
		pfx, err := netip.ParsePrefix(from)
		if err != nil {
			return from, fieldErr("from", "%q is not an IP address, a CIDR such as 10.0.0.0/24, or \"any\"", from)
		}
		pfx = pfx.Masked()
		if pfx.IsSingleIP() {
			return pfx.Addr().String(), nil
		}
		if pfx.Bits() == 0 {
			return FromAny, nil
		}
		return pfx.String(), nil
	}
	addr, err := netip.ParseAddr(from)
	if err != nil || addr.Zone() != "" {
		return from, fieldErr("from", "%q is not an IP address, a CIDR such as 10.0.0.0/24, or \"any\"", from)
	}
	return addr.Unmap().String(), nil
}

// MaxCommentLen keeps comments short enough for `ufw status` lines; UFW
// itself sets no limit.
const MaxCommentLen = 200

// ValidateComment refuses what cannot pass through UFW's command line and
// back out of its hex-encoded store unchanged: quotes (UFW's parser refuses
// a single quote and keeps a double one only sometimes), control characters
// such as newlines, and non-ASCII text.
func ValidateComment(c string) error {
	if len(c) > MaxCommentLen {
		return fieldErr("comment", "is %d characters long; at most %d are allowed", len(c), MaxCommentLen)
	}
	for i, ch := range c {
		switch {
		case ch == '\'' || ch == '"' || ch == '`':
			return fieldErr("comment", "contains a quote (%q at offset %d), which UFW cannot store reliably", ch, i)
		case ch == '\n' || ch == '\r':
			return fieldErr("comment", "contains a line break at offset %d; comments are one line", i)
		case ch < 0x20 || ch == 0x7f:
			return fieldErr("comment", "contains a control character (%U at offset %d)", ch, i)
		case ch > 0x7e:
			return fieldErr("comment", "contains %q at offset %d; only printable ASCII is accepted", ch, i)
		}
	}
	return nil
}

// Key is the rule's identity on one node, the part after the node in an ID:
// allow:6818/tcp:from=10.0.0.0/24. r must be normalized.
func (r Rule) Key() string {
	return fmt.Sprintf("%s:%s/%s:from=%s", r.Action, r.Port, r.Proto, r.From)
}

// IDFormat documents the import ID of a rule.
const IDFormat = IDForm + ", for example " + IDExample + " or login01:allow:60001:61000/tcp:from=any"

// IDForm and IDExample are IDFormat's parts, for documentation that sets them apart.
const (
	IDForm    = "NODE:ACTION:PORT/PROTO:from=SOURCE"
	IDExample = "gpu01:allow:6818/tcp:from=10.0.0.0/24"
)

// ID names a normalized rule on a node.
func ID(node string, r Rule) string { return node + ":" + r.Key() }

var idPattern = regexp.MustCompile(`^(.+):(allow|deny):([0-9]+(?::[0-9]+)?)/(tcp|udp|any):from=(.+)$`)

// ParseID splits an ID into its node and normalized rule; the comment stays
// empty.
func ParseID(id string) (string, Rule, error) {
	m := idPattern.FindStringSubmatch(id)
	if m == nil {
		return "", Rule{}, fmt.Errorf("%q does not have the form %s", id, IDFormat)
	}
	r, err := Rule{Action: m[2], Port: m[3], Proto: m[4], From: m[5]}.Normalize()
	if err != nil {
		return "", Rule{}, fmt.Errorf("%q: %w", id, err)
	}
	return m[1], r, nil
}
