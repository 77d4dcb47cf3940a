package firewall

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	cases := []struct {
		in   Rule
		want string
	}{
		{Rule{Port: "22", Proto: "tcp", From: "10.0.0.10"}, "allow:22/tcp:from=10.0.0.10"},
		{Rule{Action: "deny", Port: "0022", Proto: "udp", From: "any"}, "deny:22/udp:from=any"},
		{Rule{Port: "60001:61000", Proto: "tcp", From: "10.0.0.7/24"}, "allow:60001:61000/tcp:from=10.0.0.0/24"},
		{Rule{Port: "8005", Proto: "any", From: "10.0.0.10/32"}, "allow:8005/any:from=10.0.0.10"},
		{Rule{Port: "22", Proto: "tcp", From: "0.0.0.0/0"}, "allow:22/tcp:from=any"},
		{Rule{Port: "22", Proto: "tcp", From: "2001:DB8::1/32"}, "allow:22/tcp:from=2001:db8::/32"},
		{Rule{Port: "65535", Proto: "tcp", From: ""}, "allow:65535/tcp:from=any"},
	}
	for _, tc := range cases {
		got, err := tc.in.Normalize()
		if err != nil {
			t.Errorf("%+v: %v", tc.in, err)
			continue
		}
		if got.Key() != tc.want {
			t.Errorf("%+v: key %q, want %q", tc.in, got.Key(), tc.want)
		}
	}
}

func TestNormalizeRefuses(t *testing.T) {
	cases := []struct {
		name  string
		in    Rule
		field string
		want  string
	}{
		{"port 0", Rule{Port: "0", Proto: "tcp"}, "port", "out of range"},
		{"port above 65535", Rule{Port: "65536", Proto: "tcp"}, "port", "out of range"},
		{"reversed range", Rule{Port: "61000:60001", Proto: "tcp"}, "port", "reversed"},
		{"empty range", Rule{Port: "5000:5000", Proto: "tcp"}, "port", "reversed or empty"},
		{"port list", Rule{Port: "80,443", Proto: "tcp"}, "port", "not a port"},
		{"range with any", Rule{Port: "60001:61000", Proto: "any"}, "proto", "UFW refuses"},
		{"bad proto", Rule{Port: "22", Proto: "icmp"}, "proto", "not one of"},
		{"bad action", Rule{Action: "limit", Port: "22", Proto: "tcp"}, "action", "not one of"},
		{"bad IP", Rule{Port: "22", Proto: "tcp", From: "10.0.0.256"}, "from", "not an IP"},
		{"bad CIDR", Rule{Port: "22", Proto: "tcp", From: "10.0.0.0/33"}, "from", "not an IP"},
		{"host name", Rule{Port: "22", Proto: "tcp", From: "login01"}, "from", "not an IP"},
		{"shell in from", Rule{Port: "22", Proto: "tcp", From: "1.2.3.4;reboot"}, "from", "not an IP"},
		{"single quote", Rule{Port: "22", Proto: "tcp", Comment: "it's"}, "comment", "quote"},
		{"double quote", Rule{Port: "22", Proto: "tcp", Comment: `a "b"`}, "comment", "quote"},
		{"newline", Rule{Port: "22", Proto: "tcp", Comment: "a\nb"}, "comment", "line break"},
		{"tab", Rule{Port: "22", Proto: "tcp", Comment: "a\tb"}, "comment", "control character"},
		{"non-ASCII", Rule{Port: "22", Proto: "tcp", Comment: "Zürich"}, "comment", "printable ASCII"},
		{"too long", Rule{Port: "22", Proto: "tcp", Comment: strings.Repeat("x", 201)}, "comment", "at most"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.in.Normalize()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FieldError", err)
			}
			if fe.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (field %s), want field %s and %q", err, fe.Field, tc.field, tc.want)
			}
		})
	}
}

func TestIDRoundTrip(t *testing.T) {
	cases := []struct{ id, node, key string }{
		{"gpu01:allow:6818/tcp:from=10.0.0.0/24", "gpu01", "allow:6818/tcp:from=10.0.0.0/24"},
		{"login01:allow:60001:61000/tcp:from=any", "login01", "allow:60001:61000/tcp:from=any"},
		{"fd00::11:deny:22/any:from=2001:db8::/32", "fd00::11", "deny:22/any:from=2001:db8::/32"},
		{"gpu01:allow:22/tcp:from=10.0.0.10/32", "gpu01", "allow:22/tcp:from=10.0.0.10"},
	}
	for _, tc := range cases {
		node, r, err := ParseID(tc.id)
		if err != nil {
			t.Errorf("%s: %v", tc.id, err)
			continue
		}
		if node != tc.node || r.Key() != tc.key {
			t.Errorf("%s: node %q key %q, want %q %q", tc.id, node, r.Key(), tc.node, tc.key)
		}
		if again, _, _ := ParseID(ID(node, r)); again != node {
			t.Errorf("%s: ID does not round-trip", tc.id)
		}
	}
	for _, bad := range []string{"", "gpu01", "gpu01:allow:22/tcp", "gpu01:limit:22/tcp:from=any", "gpu01:allow:0/tcp:from=any", "gpu01:allow:22/tcp:from=nowhere"} {
		if _, _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		} else if bad == "gpu01" && !strings.Contains(err.Error(), "NODE:ACTION:PORT/PROTO:from=SOURCE") {
			t.Errorf("ParseID(%q) = %v, want the format in the error", bad, err)
		}
	}
}

func TestCommandsQuoteEveryValue(t *testing.T) {
	r, err := Rule{Port: "60001:61000", Proto: "tcp", From: "10.0.0.0/24", Comment: "srun callbacks; $(id)"}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := AddCommand(r), `ufw allow proto tcp from 10.0.0.0/24 to any port 60001:61000 comment 'srun callbacks; $(id)'`; got != want {
		t.Errorf("AddCommand = %s, want %s", got, want)
	}
	if got, want := DeleteCommand(r), "ufw delete allow proto tcp from 10.0.0.0/24 to any port 60001:61000"; got != want {
		t.Errorf("DeleteCommand = %s, want %s", got, want)
	}
	anyProto := Rule{Action: "deny", Port: "8005", Proto: "any", From: "any"}
	if got, want := AddCommand(anyProto), "ufw deny from any to any port 8005"; got != want {
		t.Errorf("AddCommand = %s, want %s", got, want)
	}
}
