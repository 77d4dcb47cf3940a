package firewall

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// The fixtures were written by ufw 0.36.2 in the lab (Debian 13), with the guide's rules plus
// rules of every shape the resources leave alone (app profile, interface, outgoing, route,
// limit, reject, source port, destination address).
func TestParseTuplesFromRealFiles(t *testing.T) {
	v4, err := ParseTuples(transporttest.Testdata(t, "user.rules.mixed"))
	if err != nil {
		t.Fatal(err)
	}
	v6, err := ParseTuples(transporttest.Testdata(t, "user6.rules.mixed"))
	if err != nil {
		t.Fatal(err)
	}
	if len(v4) != 20 || len(v6) != 6 {
		t.Fatalf("got %d IPv4 and %d IPv6 tuples, want 20 and 6", len(v4), len(v6))
	}
	var got []string
	for _, r := range Rules(v4, v6) {
		got = append(got, r.Key()+" #"+r.Comment)
	}
	want := []string{
		"allow:22/tcp:from=10.0.0.10 #SSH from login node",
		"allow:60001:61000/tcp:from=10.0.0.0/24 #srun callbacks",
		"allow:8004/udp:from=10.0.0.0/24 #BeeGFS client",
		"allow:8005/any:from=10.0.0.0/24 #BeeGFS meta",
		"allow:22/tcp:from=any #SSH",
		"deny:23/tcp:from=10.0.0.5 #",
		"allow:7000/tcp:from=10.0.0.0/24 #",
		"allow:6819/tcp:from=10.0.0.0/24 #é",
		"allow:6820/tcp:from=10.0.0.0/24 #a\"b",
		"allow:6821/tcp:from=10.0.0.0/24 #a\nb",
		"allow:6822/any:from=10.0.0.0/24 #",
		"allow:6823/tcp:from=10.0.0.0/24 #",
		`allow:6824/tcp:from=10.0.0.0/24 #x,y;z$(id)|&<>#!*?[]{}~%^=+\ `,
		"allow:7001/tcp:from=2001:db8::/32 #v6",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseTuplesFreshFileHasNone(t *testing.T) {
	tuples, err := ParseTuples(transporttest.Testdata(t, "user.rules.fresh"))
	if err != nil || len(tuples) != 0 {
		t.Errorf("fresh user.rules: %d tuples, %v; want none", len(tuples), err)
	}
}

func TestParseTuplesRefusesDamage(t *testing.T) {
	for _, line := range []string{"### tuple ### allow tcp 22", "### tuple ### allow tcp 22 0.0.0.0/0 any 0.0.0.0/0 in comment=zz"} {
		if _, err := ParseTuples(line + "\n"); err == nil {
			t.Errorf("%q accepted", line)
		}
	}
}

func sectionsOutput(parts map[string]string) string {
	var b strings.Builder
	for _, key := range []string{"v4", "v6", "conf", "defaults", "ledger"} {
		b.WriteString("@@gpucluster " + key + "\n" + parts[key] + "\n@@rc 0\n")
	}
	return transporttest.Sections(b.String())
}

func TestReadState(t *testing.T) {
	out := sectionsOutput(map[string]string{
		"v4":       transporttest.Testdata(t, "user.rules.mixed"),
		"v6":       transporttest.Testdata(t, "user6.rules.mixed"),
		"conf":     strings.Replace(transporttest.Testdata(t, "ufw.conf"), "ENABLED=no", "ENABLED=yes", 1),
		"defaults": transporttest.Testdata(t, "default-ufw"),
		"ledger":   "# header\nallow:22/tcp:from=10.0.0.10\n",
	})
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: out}}}
	st, err := ReadState(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Enabled || st.Incoming != PolicyDeny || st.Outgoing != PolicyAllow || len(st.Rules) != 14 {
		t.Errorf("state = enabled %v, in %s, out %s, %d rules", st.Enabled, st.Incoming, st.Outgoing, len(st.Rules))
	}
	if !st.Owns("allow:22/tcp:from=10.0.0.10") || st.Owns("# header") {
		t.Errorf("owned = %v", st.Owned)
	}
}

func TestReadStateInactiveUFW(t *testing.T) {
	out := sectionsOutput(map[string]string{
		"v4":       transporttest.Testdata(t, "user.rules.fresh"),
		"conf":     transporttest.Testdata(t, "ufw.conf"),
		"defaults": strings.Replace(transporttest.Testdata(t, "default-ufw"), `DEFAULT_INPUT_POLICY="DROP"`, `DEFAULT_INPUT_POLICY="ACCEPT"`, 1),
	})
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: out}}}
	st, err := ReadState(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if st.Enabled || st.Incoming != PolicyAllow || len(st.Rules) != 0 || len(st.Owned) != 0 {
		t.Errorf("state = %+v", st)
	}
}

func TestReadStateWithoutUFW(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: &transport.ExitError{Host: "gpu01", Status: 3, Stderr: "ufw is not installed (Debian package ufw)"}}}}
	_, err := ReadState(context.Background(), f)
	var ee *transport.ExitError
	if !errors.As(err, &ee) || !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("err = %v, want ErrNotInstalled with the missing package named", err)
	}
}

// A connection lost during the read is not a missing ufw.
func TestReadStateLostConnectionIsNotAMissingUFW(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: errors.New("command on gpu01 did not complete: connection lost")}}}
	_, err := ReadState(context.Background(), f)
	if err == nil || errors.Is(err, ErrNotInstalled) {
		t.Errorf("err = %v, want a read error that is not ErrNotInstalled", err)
	}
}

func TestUndeclared(t *testing.T) {
	ssh := Rule{Action: ActionAllow, Port: "22", Proto: "tcp", From: FromAny}
	slurmd := Rule{Action: ActionAllow, Port: "6818", Proto: "tcp", From: "10.0.0.0/24"}
	byHand := Rule{Action: ActionAllow, Port: "7777", Proto: "any", From: FromAny, Comment: "by hand"}
	st := State{Rules: []Rule{ssh, slurmd, byHand}, Owned: []string{ssh.Key()}}
	inRun := func(key string) bool { return key == slurmd.Key() }
	if got := st.Undeclared(inRun); len(got) != 1 || got[0].Key() != byHand.Key() {
		t.Errorf("Undeclared = %v, want only %s", got, byHand.Key())
	}
	if got := st.Undeclared(nil); len(got) != 2 || got[0].Key() != slurmd.Key() || got[1].Key() != byHand.Key() {
		t.Errorf("Undeclared(nil) = %v, want %s and %s in the node's order", got, slurmd.Key(), byHand.Key())
	}
}
