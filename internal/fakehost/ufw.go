package fakehost

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// UFW as Debian packages it, modelled through its files: the rules live as "### tuple ###"
// lines in /etc/ufw/user.rules and user6.rules, the enabled flag in /etc/ufw/ufw.conf, the
// default policies in /etc/default/ufw. A test may read or edit those files as an
// administrator would; the ufw command reads them anew each time.
const (
	ufwRules4   = "/etc/ufw/user.rules"
	ufwRules6   = "/etc/ufw/user6.rules"
	ufwConf     = "/etc/ufw/ufw.conf"
	ufwDefaults = "/etc/default/ufw"
	UFWVersion  = "0.36.2-1"
)

func addUFW(h *Host) {
	h.commands["ufw"] = ufw
	h.AddPackage("ufw", Package{Version: UFWVersion, Install: installUFW})
}

func installUFW(h *Host) {
	must(h.FS.WriteFile("/usr/sbin/ufw", []byte("#!fakehost\n"), 0o755))
	must(h.FS.MkdirAll("/etc/ufw", 0o755))
	must(h.FS.MkdirAll("/etc/default", 0o755))
	must(h.FS.WriteFile(ufwConf, []byte("# /etc/ufw/ufw.conf\nENABLED=no\nLOGLEVEL=low\n"), 0o644))
	must(h.FS.WriteFile(ufwDefaults, []byte("IPV6=yes\nDEFAULT_INPUT_POLICY=\"DROP\"\nDEFAULT_OUTPUT_POLICY=\"ACCEPT\"\nDEFAULT_FORWARD_POLICY=\"DROP\"\n"), 0o644))
	for _, p := range []string{ufwRules4, ufwRules6} {
		must(h.FS.WriteFile(p, []byte(rulesFile(nil)), 0o640))
	}
	h.InstallUnit("ufw.service", nil)
}

// ufwTuple is one rule: ACTION PROTO DPORT DST SPORT SRC DIRECTION [comment=HEX].
type ufwTuple struct {
	action, proto, port, dst, src, comment string
}

func (t ufwTuple) same(o ufwTuple) bool {
	return t.action == o.action && t.proto == o.proto && t.port == o.port && t.dst == o.dst && t.src == o.src
}

func (t ufwTuple) line() string {
	s := fmt.Sprintf("### tuple ### %s %s %s %s any %s in", t.action, t.proto, t.port, t.dst, t.src)
	if t.comment != "" {
		s += " comment=" + hex.EncodeToString([]byte(t.comment))
	}
	return s
}

// rulesFile renders a user.rules file around the tuples, each with the iptables line UFW
// derives from it.
func rulesFile(tuples []ufwTuple) string {
	var b strings.Builder
	b.WriteString("*filter\n:ufw-user-input - [0:0]\n:ufw-user-output - [0:0]\n\n### RULES ###\n")
	for _, t := range tuples {
		target := map[string]string{"allow": "ACCEPT", "deny": "DROP"}[t.action]
		fmt.Fprintf(&b, "\n%s\n-A ufw-user-input -p %s --dport %s -s %s -j %s\n", t.line(), t.proto, t.port, t.src, target)
	}
	b.WriteString("\n### END RULES ###\nCOMMIT\n")
	return b.String()
}

var tupleLine = regexp.MustCompile(`^### tuple ### (allow|deny) (\S+) (\S+) (\S+) any (\S+) in(?: comment=([0-9a-f]*))?$`)

// readTuples reads a rules file's tuples; a tuple of another shape than the fake writes is not
// modelled.
func readTuples(c *Call, p string) ([]ufwTuple, bool) {
	data, err := c.Host.FS.ReadFile(p)
	if err != nil {
		errStatus(c, err)
		return nil, false
	}
	var out []ufwTuple
	for _, l := range lines(data) {
		if !strings.HasPrefix(l, "### tuple ###") {
			continue
		}
		m := tupleLine.FindStringSubmatch(l)
		if m == nil {
			c.NotModelled("UFW tuple " + l)
			return nil, false
		}
		comment, _ := hex.DecodeString(m[6])
		out = append(out, ufwTuple{action: m[1], proto: m[2], port: m[3], dst: m[4], src: m[5], comment: string(comment)})
	}
	return out, true
}

// ufw models enable, disable, default, and adding and deleting rules given as
// `[delete] ACTION [proto P] from SRC to any port PORT [proto P] [comment C]`.
func ufw(c *Call) int {
	args := c.Args[1:]
	if len(args) > 0 && args[0] == "--force" {
		args = args[1:]
	}
	if len(args) == 0 {
		return c.NotModelled("ufw without a command")
	}
	switch args[0] {
	case "enable", "disable":
		enabled := map[string]string{"enable": "yes", "disable": "no"}[args[0]]
		if err := setVar(c.Host, ufwConf, "ENABLED", enabled); err != nil {
			return errStatus(c, err)
		}
		c.Println(map[string]string{"yes": "Firewall is active and enabled on system startup", "no": "Firewall stopped and disabled on system startup"}[enabled])
		return 0
	case "default":
		return ufwDefault(c, args[1:])
	case "allow", "deny":
		return ufwRule(c, false, args)
	case "delete":
		return ufwRule(c, true, args[1:])
	}
	return c.NotModelled("ufw " + args[0])
}

func ufwDefault(c *Call, args []string) int {
	policy := map[string]string{"allow": "ACCEPT", "deny": "DROP", "reject": "REJECT"}
	vars := map[string]string{"incoming": "DEFAULT_INPUT_POLICY", "outgoing": "DEFAULT_OUTPUT_POLICY"}
	if len(args) != 2 || policy[args[0]] == "" || vars[args[1]] == "" {
		return c.NotModelled("ufw default " + strings.Join(args, " "))
	}
	if err := setVar(c.Host, ufwDefaults, vars[args[1]], `"`+policy[args[0]]+`"`); err != nil {
		return errStatus(c, err)
	}
	c.Printf("Default %s policy changed to '%s'\n", args[1], args[0])
	return 0
}

// setVar sets NAME=value in a sourced configuration file, in place.
func setVar(h *Host, p, name, value string) error {
	data, err := h.FS.ReadFile(p)
	if err != nil {
		return err
	}
	ls := lines(data)
	i := slices.IndexFunc(ls, func(l string) bool { return strings.HasPrefix(l, name+"=") })
	if i < 0 {
		ls = append(ls, name+"="+value)
	} else {
		ls[i] = name + "=" + value
	}
	return h.FS.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644)
}

func ufwRule(c *Call, del bool, args []string) int {
	t := ufwTuple{action: args[0], proto: "any"}
	var from string
	for i := 1; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return c.NotModelled("ufw rule " + strings.Join(args, " "))
		}
		v := args[i+1]
		switch args[i] {
		case "proto":
			t.proto = v
		case "from":
			from = v
		case "to":
			if v != "any" {
				return c.NotModelled("ufw rule to " + v)
			}
		case "port":
			t.port = v
		case "comment":
			t.comment = v
		default:
			return c.NotModelled("ufw rule word " + args[i])
		}
	}
	if t.port == "" || from == "" {
		return c.NotModelled("ufw rule without from and port")
	}
	if strings.Contains(t.port, ":") && t.proto == "any" {
		return c.Errorf(1, "ERROR: Must specify 'tcp' or 'udp' with multiple ports")
	}
	v4, v6 := from == "any", from == "any"
	if from != "any" {
		p, err := netip.ParsePrefix(from)
		if err != nil {
			a, aerr := netip.ParseAddr(from)
			if aerr != nil {
				return c.Errorf(1, "ERROR: Bad source address")
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		v4, v6 = p.Addr().Is4(), p.Addr().Is6()
	}
	status, changed := 0, false
	for _, f := range []struct {
		path, any string
		use       bool
	}{{ufwRules4, "0.0.0.0/0", v4}, {ufwRules6, "::/0", v6}} {
		if !f.use {
			continue
		}
		ft := t
		ft.dst, ft.src = f.any, from
		if from == "any" {
			ft.src = f.any
		}
		s, ch := editRules(c, f.path, ft, del)
		status, changed = max(status, s), changed || ch
	}
	switch {
	case status != 0:
	case del && !changed:
		c.Println("Could not delete non-existent rule")
	case del:
		c.Println("Rule deleted")
	case changed:
		c.Println("Rule added")
	default:
		c.Println("Skipping adding existing rule")
	}
	return status
}

// editRules adds t to the file (updating its comment in place when only that differs) or
// deletes it; changed tells whether the file changed.
func editRules(c *Call, p string, t ufwTuple, del bool) (status int, changed bool) {
	tuples, ok := readTuples(c, p)
	if !ok {
		return 1, false
	}
	i := slices.IndexFunc(tuples, t.same)
	switch {
	case del && i < 0, !del && i >= 0 && tuples[i].comment == t.comment:
		return 0, false
	case del:
		tuples = slices.Delete(tuples, i, i+1)
	case i >= 0:
		tuples[i].comment = t.comment
	default:
		tuples = append(tuples, t)
	}
	if err := c.Host.FS.WriteFile(p, []byte(rulesFile(tuples)), 0o640); err != nil {
		return errStatus(c, err), false
	}
	return 0, true
}
