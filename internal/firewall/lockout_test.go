package firewall

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func mustRules(t *testing.T, keys ...string) []Rule {
	t.Helper()
	var rules []Rule
	for _, k := range keys {
		_, r, err := ParseID("n:" + k)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	return rules
}

func TestParseSSHConnection(t *testing.T) {
	c, err := ParseSSHConnection("10.0.0.10 51234 10.0.0.11 22\n")
	if err != nil || c.Source != netip.MustParseAddr("10.0.0.10") || c.Port != 22 {
		t.Errorf("got %+v, %v", c, err)
	}
	c, err = ParseSSHConnection("::ffff:10.0.0.1 40000 ::ffff:10.0.0.10 2222")
	if err != nil || c.Source != netip.MustParseAddr("10.0.0.1") || c.Port != 2222 {
		t.Errorf("mapped: got %+v, %v", c, err)
	}
	for _, bad := range []string{"", "10.0.0.10 1 2", "x 1 10.0.0.11 22", "10.0.0.10 1 10.0.0.11 0"} {
		if _, err := ParseSSHConnection(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckLockout(t *testing.T) {
	login := Connection{Source: netip.MustParseAddr("10.0.0.10"), Port: 22}
	cases := []struct {
		name     string
		rules    []Rule
		enabled  bool
		incoming string
		want     string
	}{
		{"guide's SSH rule", mustRules(t, "allow:22/tcp:from=10.0.0.10"), true, PolicyDeny, ""},
		{"subnet rule", mustRules(t, "allow:22/any:from=10.0.0.0/24"), true, PolicyDeny, ""},
		{"range covers 22", mustRules(t, "allow:20:30/tcp:from=any"), true, PolicyReject, ""},
		{"no rules", nil, true, PolicyDeny, "no allow rule admits it"},
		{"udp only", mustRules(t, "allow:22/udp:from=10.0.0.10"), true, PolicyDeny, "no allow rule"},
		{"other source", mustRules(t, "allow:22/tcp:from=10.0.0.11"), true, PolicyDeny, "no allow rule"},
		{"deny first", mustRules(t, "deny:22/tcp:from=10.0.0.0/24", "allow:22/tcp:from=10.0.0.10"), true, PolicyDeny, "deny:22/tcp:from=10.0.0.0/24 matches it first"},
		{"disabled", nil, false, PolicyDeny, ""},
		{"allow incoming", nil, true, PolicyAllow, ""},
		{"allow incoming, a deny rule matches", mustRules(t, "deny:22/tcp:from=10.0.0.10"), true, PolicyAllow, "deny:22/tcp:from=10.0.0.10 matches it first"},
		{"allow incoming, a deny rule for others", mustRules(t, "deny:22/tcp:from=10.0.0.99"), true, PolicyAllow, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLockout(tc.rules, tc.enabled, tc.incoming, login, "enabling UFW")
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			var le *LockoutError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "10.0.0.10 to port 22/tcp") {
				t.Errorf("err = %v, want a LockoutError with %q", err, tc.want)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	rules := mustRules(t, "allow:22/tcp:from=10.0.0.10", "allow:6818/tcp:from=10.0.0.0/24")
	left := Without(rules, "allow:22/tcp:from=10.0.0.10")
	if len(left) != 1 || left[0].Port != "6818" {
		t.Errorf("Without = %+v", left)
	}
}

func TestCanLockOut(t *testing.T) {
	deny := mustRules(t, "deny:5555/tcp:from=any")
	allow := mustRules(t, "allow:22/tcp:from=any")
	if CanLockOut(deny, false, PolicyDeny) || CanLockOut(allow, true, PolicyAllow) {
		t.Error("a disabled firewall, or one that allows everything, was taken as able to lock out")
	}
	if !CanLockOut(allow, true, PolicyDeny) || !CanLockOut(deny, true, PolicyAllow) {
		t.Error("a deny policy or a deny rule was not taken as able to lock out")
	}
}
