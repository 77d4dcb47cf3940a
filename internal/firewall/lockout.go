package firewall

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Runner runs a script as the login user. SSH_CONNECTION is read that way:
// sudo does not pass it on.
type Runner interface {
	Run(ctx context.Context, script string, stdin []byte) (transport.Result, error)
}

// Connection is the provider's own SSH connection as the node sees it: for a
// GPU server behind the jump host the source is the jump host's address, for
// the login node it is the machine Terraform runs on.
type Connection struct {
	Source netip.Addr
	Port   int
}

func (c Connection) String() string { return fmt.Sprintf("%s to port %d/tcp", c.Source, c.Port) }

// SSHConnection reads the session's own SSH_CONNECTION.
func SSHConnection(ctx context.Context, h Runner) (Connection, error) {
	res, err := h.Run(ctx, `printf '%s\n' "${SSH_CONNECTION:-}"`, nil)
	if err != nil {
		return Connection{}, fmt.Errorf("read SSH_CONNECTION: %w", err)
	}
	return ParseSSHConnection(string(res.Stdout))
}

// ParseSSHConnection reads "CLIENT_IP CLIENT_PORT SERVER_IP SERVER_PORT".
func ParseSSHConnection(s string) (Connection, error) {
	f := strings.Fields(s)
	if len(f) != 4 {
		return Connection{}, fmt.Errorf("SSH_CONNECTION %q does not have four fields", strings.TrimSpace(s))
	}
	src, err := netip.ParseAddr(f[0])
	if err != nil {
		return Connection{}, fmt.Errorf("SSH_CONNECTION %q: client address: %w", s, err)
	}
	port, err := strconv.Atoi(f[3])
	if err != nil || port < 1 || port > 65535 {
		return Connection{}, fmt.Errorf("SSH_CONNECTION %q: bad server port", strings.TrimSpace(s))
	}
	return Connection{Source: src.Unmap().WithZone(""), Port: port}, nil
}

// Decide returns the rule UFW applies to a TCP connection from c.Source to
// c.Port: the first one that matches, in UFW's order.
func Decide(rules []Rule, c Connection) (Rule, bool) {
	for _, r := range rules {
		if r.matches(c) {
			return r, true
		}
	}
	return Rule{}, false
}

// Admits reports whether rules let c in under a deny-incoming policy.
func Admits(rules []Rule, c Connection) bool {
	r, ok := Decide(rules, c)
	return ok && r.Action == ActionAllow
}

func (r Rule) matches(c Connection) bool {
	return r.matchesPort(c.Port) && r.covers(c.Source)
}

// matchesPort reports whether the rule applies to TCP traffic to port.
func (r Rule) matchesPort(port int) bool {
	if r.Proto != ProtoTCP && r.Proto != ProtoAny {
		return false
	}
	lo, hi, _ := strings.Cut(r.Port, ":")
	l, _ := strconv.Atoi(lo)
	h := l
	if hi != "" {
		h, _ = strconv.Atoi(hi)
	}
	return port >= l && port <= h
}

// covers reports whether the rule's source includes addr.
func (r Rule) covers(addr netip.Addr) bool {
	if r.From == FromAny {
		return true
	}
	if pfx, err := netip.ParsePrefix(r.From); err == nil {
		return pfx.Contains(addr)
	}
	a, err := netip.ParseAddr(r.From)
	return err == nil && a == addr
}

// LockoutError says that a change would cut the provider's own connection.
type LockoutError struct {
	Connection Connection
	Blocker    *Rule
	Change     string
}

func (e *LockoutError) Error() string {
	why := "no allow rule admits it"
	if e.Blocker != nil {
		why = "the rule " + e.Blocker.Key() + " matches it first"
	}
	return fmt.Sprintf("%s would drop the provider's own SSH connection from %s: %s", e.Change, e.Connection, why)
}

// CheckLockout refuses an enabled firewall that would drop c: the first rule
// that matches c denies it, or none matches and the incoming policy is not
// allow. change says what is being attempted.
func CheckLockout(rules []Rule, enabled bool, incoming string, c Connection, change string) error {
	if !enabled {
		return nil
	}
	r, ok := Decide(rules, c)
	switch {
	case ok && r.Action == ActionAllow, !ok && incoming == PolicyAllow:
		return nil
	case ok:
		return &LockoutError{Connection: c, Change: change, Blocker: &r}
	default:
		return &LockoutError{Connection: c, Change: change}
	}
}

// CanLockOut reports whether any connection could be dropped: UFW is enabled,
// and the incoming policy or a deny rule refuses something. When it cannot,
// a lockout check needs no look at the connection.
func CanLockOut(rules []Rule, enabled bool, incoming string) bool {
	if !enabled {
		return false
	}
	return incoming != PolicyAllow || slices.ContainsFunc(rules, func(r Rule) bool { return r.Action != ActionAllow })
}

// Without returns rules without the one with key's identity.
func Without(rules []Rule, key string) []Rule {
	var out []Rule
	for _, r := range rules {
		if r.Key() != key {
			out = append(out, r)
		}
	}
	return out
}
