package munge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units/unitstest"
)

const sum = "d795bc42b84290bfb7f00acdcb1136adc62622d81da0d86e7ffdb5dff96a58b2"

// stateReplies answer ReadState: the host's shared read of unit states and key files, once for
// the key and once for munged. key is "absent" or sha256sum's and stat's words for it,
// "SUM  -\nOWNER GROUP MODE".
func stateReplies(key, active, enabled string) []transporttest.Reply {
	var f units.File
	if key != "absent" {
		w := strings.Fields(key)
		mode, _ := strconv.ParseUint(w[4], 8, 32)
		f = units.File{Exists: true, SHA256: w[0], Owner: w[2], Group: w[3], Mode: fs.FileMode(mode)}
	}
	out := unitstest.OutWithFile(service+".service", units.State{Active: active, Enabled: enabled}, KeyPath, f)
	return []transporttest.Reply{{Stdout: out}, {Stdout: out}}
}

func TestReadState(t *testing.T) {
	tests := []struct {
		name    string
		replies []transporttest.Reply
		want    NodeState
	}{
		{"installed", stateReplies(sum+"  -\nmunge munge 400", "active", "enabled"),
			NodeState{KeyExists: true, Fingerprint: sum, Owner: "munge", Group: "munge", Mode: 0o400, Active: true, Enabled: true}},
		{"debian default mode, stopped", stateReplies(sum+"  -\nmunge munge 600", "inactive", "disabled"),
			NodeState{KeyExists: true, Fingerprint: sum, Owner: "munge", Group: "munge", Mode: 0o600}},
		{"no key", stateReplies("absent", "failed", "enabled"), NodeState{Enabled: true}},
		// munged's words, not is-active's and is-enabled's exit statuses, as before the shared read.
		{"reloading, static", stateReplies("absent", "reloading", "static"), NodeState{}},
		{"not installed", stateReplies("absent", "inactive", "not-found"), NodeState{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadState(context.Background(), &transporttest.Fake{T: t, Replies: tt.replies})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadStateErrors(t *testing.T) {
	unit := unitstest.Out(service+".service", units.State{Active: "active", Enabled: "enabled"})
	unreadable := strings.Replace(unit, "@@gpucluster 0 1 files\n\n\n", "@@gpucluster 1 0 files\n\n", 1)
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: unreadable}}}
	if _, err := ReadState(context.Background(), f); err == nil || !strings.Contains(err.Error(), "status 1") {
		t.Errorf("an unreadable key: got %v, want the hashing's status", err)
	}
}

// The key is hashed on the node, in the host's shared read, which never prints it.
func TestReadStateHashesOnTheNode(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: stateReplies(sum+"  -\nmunge munge 400", "active", "enabled")}
	if _, err := ReadState(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	script := f.Calls[0].Script
	if !strings.Contains(script, "sha256sum --") || !strings.Contains(script, KeyPath) || strings.Contains(script, "cat") || strings.Contains(script, "base64") {
		t.Errorf("the state read must hash the key on the node and never print it:\n%s", script)
	}
}

func TestProblems(t *testing.T) {
	good := NodeState{KeyExists: true, Fingerprint: sum, Owner: "munge", Group: "munge", Mode: 0o400, Active: true, Enabled: true}
	with := func(change func(*NodeState)) NodeState {
		st := good
		change(&st)
		return st
	}
	tests := []struct {
		name string
		st   NodeState
		want []string
	}{
		{"in sync", good, nil},
		{"missing", NodeState{}, []string{"missing on gpu02", "munge not running on gpu02"}},
		{"missing, daemon still up", NodeState{Active: true}, []string{"missing on gpu02"}},
		{"other key", with(func(s *NodeState) { s.Fingerprint = strings.Repeat("0", 64) }), []string{"different key on gpu02"}},
		{"mode", with(func(s *NodeState) { s.Mode = 0o644 }), []string{"mode 0644 on gpu02, want 0400"}},
		{"owner", with(func(s *NodeState) { s.Owner, s.Group = "root", "root" }), []string{"owner root:root on gpu02, want munge:munge"}},
		{"stopped", with(func(s *NodeState) { s.Active = false }), []string{"munge not running on gpu02"}},
		{"not enabled", with(func(s *NodeState) { s.Enabled = false }), []string{"munge not enabled on gpu02"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Problems("gpu02", sum, tt.st); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGenerateKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xa5}, 128)
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: string(key)}}}
	got, err := GenerateKey(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, key) {
		t.Errorf("got %d bytes, want the %d that mungekey wrote", len(got), len(key))
	}
	script := f.Calls[0].Script
	for _, want := range []string{"umask 077", "dir=/etc/munge\n", "mktemp -- \"$dir/", "mungekey --create --force --keyfile \"$t\"", "trap 'rm -f -- \"$t\"' EXIT"} {
		if !strings.Contains(script, want) {
			t.Errorf("generate script lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, KeyPath) {
		t.Errorf("generating must not touch the key in use:\n%s", script)
	}
}

func TestGenerateKeyRefusesOddSizes(t *testing.T) {
	for _, out := range []string{"", strings.Repeat("x", 31), strings.Repeat("x", 1025)} {
		f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: out}}}
		_, err := GenerateKey(context.Background(), f)
		if err == nil || !strings.Contains(err.Error(), "munged needs 32 to 1024") {
			t.Errorf("%d bytes: got %v, want a size error", len(out), err)
		}
		if err != nil && out != "" && strings.Contains(err.Error(), out) {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

// host is a KeyWriter and transport.FileReader double around a Fake.
type host struct {
	*transporttest.Fake
	files    map[string][]byte
	written  []transport.File
	writeErr error
}

func (h *host) WriteFile(_ context.Context, f transport.File) (bool, error) {
	h.written = append(h.written, f)
	return true, h.writeErr
}

func (h *host) ReadFile(_ context.Context, p string) ([]byte, bool, error) {
	c, ok := h.files[p]
	return c, ok, nil
}

func TestInstall(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 128)
	fp := Fingerprint(key)
	installed := fp + "  -\nmunge munge 400"
	tests := []struct {
		name       string
		state      []transporttest.Reply
		want       Outcome
		wantScript string
	}{
		{"in sync: no restart", stateReplies(installed, "active", "enabled"), Outcome{}, ""},
		{"other key: restart", stateReplies(sum+"  -\nmunge munge 600", "active", "enabled"), Outcome{KeyChanged: true, Restarted: true}, "unit=munge\n"},
		{"no key: restart", stateReplies("absent", "failed", "enabled"), Outcome{KeyChanged: true, Restarted: true}, "unit=munge\n"},
		{"same key, stopped: start", stateReplies(installed, "inactive", "enabled"), Outcome{Restarted: true}, "unit=munge\n"},
		{"same key, not enabled: enable only", stateReplies(installed, "active", "disabled"), Outcome{}, "systemctl enable --quiet munge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := tt.state
			if tt.wantScript != "" {
				replies = append(replies, transporttest.Reply{})
			}
			if tt.want.Restarted {
				replies = append(replies, transporttest.Reply{})
			}
			h := &host{Fake: &transporttest.Fake{T: t, Replies: replies}}
			got, err := Install(context.Background(), h, key)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("outcome %+v, want %+v", got, tt.want)
			}
			want := transport.File{Path: KeyPath, Content: key, Owner: "munge", Group: "munge", Mode: 0o400}
			if len(h.written) != 1 || !reflect.DeepEqual(h.written[0], want) {
				t.Errorf("wrote %+v, want the key once as %s munge:munge 0400", h.written, KeyPath)
			}
			if tt.wantScript != "" && !strings.Contains(h.Calls[2].Script, tt.wantScript) {
				t.Errorf("the script after the reads lacks %q:\n%s", tt.wantScript, h.Calls[2].Script)
			}
			// A restart enables munged only when it is not enabled: its package enabled it, and
			// systemctl enable of an enabled unit with a SysV script reloads systemd all the same.
			if tt.want.Restarted && !strings.HasPrefix(h.Calls[2].Script, transport.ScriptEnv+units.EnableText("munge")+" || exit\n") {
				t.Errorf("the restart does not start with the enable guard:\n%s", h.Calls[2].Script)
			}
			if len(h.Replies) != 0 {
				t.Errorf("%d scripts expected but not run", len(h.Replies))
			}
			for _, c := range h.Calls {
				if bytes.Contains([]byte(c.Script), key) || bytes.Contains(c.Stdin, key) {
					t.Errorf("the key went into a script or its stdin: %q", c.Script)
				}
			}
		})
	}
}

func TestInstallQuotesRestartFailure(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 128)
	journal := &transport.ExitError{Host: "gpu02", Status: 1, Stderr: "munged: Error: Keyfile is insecure"}
	h := &host{Fake: &transporttest.Fake{T: t, Replies: append(stateReplies("absent", "failed", "enabled"), transporttest.Reply{Err: journal})}}
	_, err := Install(context.Background(), h, key)
	if err == nil || !strings.Contains(err.Error(), "restart munge") || !strings.Contains(err.Error(), "Keyfile is insecure") {
		t.Fatalf("got %v, want the restart failure with munged's words", err)
	}
}

func TestInstallWriteFailure(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 128)
	h := &host{Fake: &transporttest.Fake{T: t, Replies: stateReplies("absent", "failed", "enabled")}, writeErr: errors.New("disk full")}
	_, err := Install(context.Background(), h, key)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v, want the write failure", err)
	}
}

func TestReadKey(t *testing.T) {
	key := bytes.Repeat([]byte{9}, 128)
	got, exists, err := ReadKey(context.Background(), &host{files: map[string][]byte{KeyPath: key}})
	if err != nil || !exists || !bytes.Equal(got, key) {
		t.Fatalf("got %d bytes, %v, %v; want the key", len(got), exists, err)
	}
	_, exists, err = ReadKey(context.Background(), &host{files: map[string][]byte{}})
	if err != nil || exists {
		t.Fatalf("missing key: got exists=%v err=%v", exists, err)
	}
	_, _, err = ReadKey(context.Background(), &host{files: map[string][]byte{KeyPath: []byte("short")}})
	if err == nil || strings.Contains(err.Error(), "short") {
		t.Fatalf("short key: got %v, want a size error that does not quote the key", err)
	}
}

func TestWaitReadyPolls(t *testing.T) {
	refused := &transport.ExitError{Host: "gpu01", Status: 1, Stderr: "munge: Error: Failed to access \"/run/munge/munge.socket.2\""}
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: refused}, {Err: refused}, {}}}
	if err := WaitReady(context.Background(), f, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if len(f.Calls) != 3 {
		t.Errorf("asked %d times, want 3", len(f.Calls))
	}
}

func TestWaitReadyStopsWithContext(t *testing.T) {
	refused := &transport.ExitError{Host: "gpu01", Status: 1, Stderr: "munge: Error: Failed to access socket"}
	ctx, cancel := context.WithCancel(context.Background())
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: refused}}}
	cancel()
	err := WaitReady(ctx, f, time.Hour)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "Failed to access socket") {
		t.Fatalf("got %v, want the cancellation with the last refusal", err)
	}
}

func TestCredentialAndDecode(t *testing.T) {
	cred := "MUNGE:AwQFAAD...:"
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: cred + "\n"}}}
	got, err := Credential(context.Background(), f)
	if err != nil || string(got) != cred {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := Credential(context.Background(), &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: "garbage"}}}); err == nil {
		t.Error("a non-credential was accepted")
	}

	tests := []struct {
		name    string
		reply   transporttest.Reply
		wantErr string
	}{
		{"success", transporttest.Reply{Stdout: unmungeSays(0, "STATUS:          Success (0)\nENCODE_HOST:     login01")}, ""},
		{"replayed", transporttest.Reply{Stdout: unmungeSays(17, "STATUS:          Replayed credential (17)"), Err: &transport.ExitError{Status: 17}}, "STATUS Replayed credential (17)"},
		{"other key", transporttest.Reply{Err: &transport.ExitError{Host: "gpu02", Status: 6, Stderr: "unmunge: Error: Invalid credential"}}, "Invalid credential"},
		{"no status", transporttest.Reply{Stdout: unmungeSays(0, "hello")}, "no STATUS"},
		{"status only in a section after", transporttest.Reply{Stdout: unmungeSays(0, "hello") + transporttest.Sections("@@gpucluster also\nSTATUS: Success (0)\n@@rc 0\n")}, "no STATUS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{tt.reply}}
			_, err := Decode(context.Background(), f, []byte(cred), "")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
			}
			if string(f.Calls[0].Stdin) != cred || strings.Contains(f.Calls[0].Script, cred) {
				t.Errorf("the credential must go on stdin only: script %q", f.Calls[0].Script)
			}
		})
	}
}

// unmungeSays is the decode command's section of unmunge's output.
func unmungeSays(status int, out string) string {
	return transporttest.Sections(fmt.Sprintf("@@gpucluster unmunge\n%s\n@@rc %d\n", out, status))
}

func TestStop(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}
	if err := Stop(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if s := f.Calls[0].Script; !strings.Contains(s, "systemctl disable --now --quiet munge") || strings.Contains(s, "rm") {
		t.Errorf("stop must disable and stop munged and keep the key:\n%s", s)
	}
}

func TestFingerprint(t *testing.T) {
	// sha256 of the empty input, the usual test vector.
	if got := Fingerprint(nil); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Fingerprint(nil) = %s", got)
	}
	if Fingerprint([]byte("a")) == Fingerprint([]byte("b")) || len(Fingerprint([]byte("a"))) != 64 {
		t.Error("fingerprints must be 64 hex digits and differ for different keys")
	}
}

func TestVerifyAcross(t *testing.T) {
	cred := "MUNGE:AwQFAAD...:"
	ctl := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: cred + "\n"}}}
	nodes := map[string]*transporttest.Fake{
		"login01": {T: t, Replies: []transporttest.Reply{{Stdout: unmungeSays(0, "STATUS:          Success (0)")}}},
		"gpu01":   {T: t, Replies: []transporttest.Reply{{Stdout: unmungeSays(0, "STATUS:          Success (0)")}}},
		"gpu02":   {T: t, Replies: []transporttest.Reply{{Stdout: unmungeSays(6, "STATUS:          Invalid credential (6)"), Err: &transport.ExitError{Status: 6}}}},
	}
	executors := map[string]transport.Executor{}
	for n, f := range nodes {
		executors[n] = f
	}
	const also = "sec hostname cat /proc/sys/kernel/hostname\n"
	results, err := VerifyAcross(context.Background(), ctl, executors, also)
	if err != nil {
		t.Fatal(err)
	}
	if len(ctl.Calls) != 1 {
		t.Errorf("the controller made %d credentials, want one for every node", len(ctl.Calls))
	}
	for n, f := range nodes {
		if len(f.Calls) != 1 || string(f.Calls[0].Stdin) != cred {
			t.Errorf("%s: decoded %d times (%+v), want the controller's credential once", n, len(f.Calls), f.Calls)
		} else if script := f.Calls[0].Script; !strings.Contains(script, "unmunge") || !strings.Contains(script, also) {
			t.Errorf("%s: the decode command does not carry the read asked along with it:\n%s", n, script)
		}
	}
	if len(results) != 3 || results["login01"].Err != nil || results["gpu01"].Err != nil ||
		results["gpu02"].Err == nil || !strings.Contains(results["gpu02"].Err.Error(), "Invalid credential") {
		t.Errorf("results %v, want success on login01 and gpu01 and unmunge's STATUS on gpu02", results)
	}
}

func TestVerifyAcrossWithoutCredential(t *testing.T) {
	ctl := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: &transport.ExitError{Host: "login01", Status: 1, Stderr: "munge: Error: Failed to access socket"}}}}
	gpu := &transporttest.Fake{T: t}
	results, err := VerifyAcross(context.Background(), ctl, map[string]transport.Executor{"gpu01": gpu}, "")
	if err == nil || !strings.Contains(err.Error(), "Failed to access socket") || results != nil {
		t.Fatalf("got %v, %v; want munge -n's failure and no results", results, err)
	}
	if len(gpu.Calls) != 0 {
		t.Error("a node was asked to decode without a credential")
	}
}

func TestInstallVersion(t *testing.T) {
	const a, b = "0.5.16-1.1~deb13u1", "0.5.16-1.1~deb13u1+gpucluster1"
	at := func(v string) transporttest.Reply {
		return transporttest.Reply{Stdout: unitstest.OutWithPackages(service+".service", units.State{Active: "active", Enabled: "enabled"}, "libmunge2\tii \t"+v+"\nmunge\tii \t"+v+"\n", 0)}
	}
	none := transporttest.Reply{Stdout: unitstest.OutWithPackages(service+".service", units.State{Active: "inactive", Enabled: "enabled"}, "", 1)}
	unit := func(active string) transporttest.Reply {
		return transporttest.Reply{Stdout: unitstest.OutWithFile(service+".service", units.State{Active: active, Enabled: "enabled"}, KeyPath, units.File{})}
	}
	tests := []struct {
		name        string
		replies     []transporttest.Reply
		wantChanged bool
		wantLast    string
	}{
		{"at the version: reads only", []transporttest.Reply{unit("active"), at(b)}, false, "dpkg-query"},
		{"running: upgraded, then restarted and asked", []transporttest.Reply{unit("active"), at(a), {}, {}, {}}, true, "munge -n"},
		{"not running: upgraded, left to the key's install", []transporttest.Reply{unit("inactive"), none, {}}, true, "'munge=" + b + "'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: tt.replies}
			changed, err := InstallVersion(context.Background(), f, b)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if len(f.Replies) != 0 {
				t.Errorf("%d scripts expected but not run", len(f.Replies))
			}
			if last := f.Calls[len(f.Calls)-1].Script; !strings.Contains(last, tt.wantLast) {
				t.Errorf("the last script lacks %q:\n%s", tt.wantLast, last)
			}
			restarts := 0
			for _, c := range f.Calls {
				if strings.Contains(c.Script, "systemctl restart") {
					restarts++
				}
			}
			if want := tt.wantLast == "munge -n"; (restarts == 1) != want || restarts > 1 {
				t.Errorf("munged restarted %d times, want a restart %v", restarts, want)
			}
		})
	}
}

func TestInstallVersionRefusesDowngrade(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{Stdout: unitstest.OutWithFile(service+".service", units.State{Active: "active", Enabled: "enabled"}, KeyPath, units.File{})},
		{Stdout: "libmunge2\tii \t0.5.17-1\nmunge\tii \t0.5.17-1\n"},
	}}
	if _, err := InstallVersion(context.Background(), f, "0.5.16-1"); err == nil || len(f.Calls) != 2 {
		t.Fatalf("InstallVersion = %v after %d scripts, want a refusal after the reads", err, len(f.Calls))
	}
}
