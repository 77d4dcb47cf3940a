package nodes

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestRenderAndParseAllowGroups(t *testing.T) {
	content, err := RenderAllowGroups([]string{"sudo", "hpc-admins"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(content), "\nAllowGroups sudo hpc-admins\n") {
		t.Errorf("content = %q", content)
	}
	if got := ParseAllowGroups(string(content)); !reflect.DeepEqual(got, []string{"sudo", "hpc-admins"}) {
		t.Errorf("round trip = %q", got)
	}
	for _, bad := range [][]string{nil, {"sudo", "bad group"}, {"*"}, {"Sudo"}, {"a;b"}} {
		if _, err := RenderAllowGroups(bad); err == nil {
			t.Errorf("RenderAllowGroups(%q) accepted it", bad)
		}
	}
}

func TestCheckMembership(t *testing.T) {
	if err := CheckMembership("admin", "admin sudo users", []string{"wheel", "sudo"}); err != nil {
		t.Errorf("member refused: %v", err)
	}
	err := CheckMembership("admin", "admin users", []string{"sudo"})
	if err == nil || !strings.Contains(err.Error(), "admin is only in admin, users") || !strings.Contains(err.Error(), "locked out") {
		t.Errorf("non-member: %v", err)
	}
}

func prepared(idGroups string, previous *string) string {
	s := "@@gpucluster id\n" + idGroups + "\n@@rc 0\n@@gpucluster previous\n"
	if previous == nil {
		return transporttest.Sections(s + "@@rc 1\n")
	}
	return transporttest.Sections(s + base64.StdEncoding.EncodeToString([]byte(*previous)) + "\n@@rc 0\n")
}

func TestApplyAllowGroups(t *testing.T) {
	old := "AllowGroups wheel\n"
	tests := []struct {
		name        string
		reply       string
		changed     bool
		wantWrites  int
		wantCalls   int
		wantStdin   *string
		wantRestore string
		wantErr     string
	}{
		{"new file validated and reloaded", prepared("admin sudo", nil), true, 1, 2, nil, `rm -f -- "$p"`, ""},
		{"changed file keeps the old one for restore", prepared("admin sudo", &old), true, 1, 2, &old, "mktemp", ""},
		{"unchanged file: no reload", prepared("admin sudo", &old), false, 1, 1, nil, "", ""},
		{"not a member: nothing written", prepared("admin users", nil), true, 0, 1, nil, "", "locked out"},
		{"unknown user", transporttest.Sections("@@gpucluster id\n@@rc 1\n@@gpucluster previous\n@@rc 1\n"), true, 0, 1, nil, "", "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &fakeHost{Fake: transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: tt.reply}, {}}}, changed: tt.changed}
			changed, err := ApplyAllowGroups(context.Background(), h, "admin", []string{"sudo"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || changed != tt.changed {
				t.Fatalf("ApplyAllowGroups() = %v, %v", changed, err)
			}
			if len(h.writes) != tt.wantWrites || len(h.Calls) != tt.wantCalls {
				t.Fatalf("%d writes, %d sudo calls; want %d, %d", len(h.writes), len(h.Calls), tt.wantWrites, tt.wantCalls)
			}
			if !strings.Contains(h.Calls[0].Script, "user=admin\n") {
				t.Errorf("check script does not name the user:\n%s", h.Calls[0].Script)
			}
			if tt.wantWrites == 1 {
				w := h.writes[0]
				if w.Path != AllowGroupsPath || w.Mode != 0o644 || w.Owner != "root" {
					t.Errorf("write = %+v", w)
				}
			}
			if tt.wantCalls == 2 {
				v := h.Calls[1]
				if (tt.wantStdin == nil) != (v.Stdin == nil) || (tt.wantStdin != nil && string(v.Stdin) != *tt.wantStdin) {
					t.Errorf("validate stdin = %q", v.Stdin)
				}
				if !strings.Contains(v.Script, "sshd -t") || !strings.Contains(v.Script, tt.wantRestore) {
					t.Errorf("validate script lacks sshd -t or %q:\n%s", tt.wantRestore, v.Script)
				}
			}
		})
	}
}

func TestApplyAllowGroupsReportsSSHDRejection(t *testing.T) {
	hostErr := &transport.ExitError{Host: "gpu01", Status: 1, Stderr: "sshd -t: /etc/ssh/sshd_config.d/90-allow-sudo.conf line 2: bad"}
	h := &fakeHost{Fake: transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: prepared("sudo", nil)}, {Err: hostErr}}}, changed: true}
	_, err := ApplyAllowGroups(context.Background(), h, "admin", []string{"sudo"})
	if err == nil || !strings.Contains(err.Error(), "line 2: bad") || !strings.Contains(err.Error(), "restored") {
		t.Fatalf("err = %v", err)
	}
}

// sandbox runs the drop-in scripts on this machine against a temporary
// file, with stand-ins for sshd and systemctl that log their calls.
type sandbox struct {
	dir, file, log string
}

func newSandbox(t *testing.T, sshdOK bool) sandbox {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	s := sandbox{dir: bin, file: filepath.Join(dir, "90-allow-sudo.conf"), log: filepath.Join(dir, "log")}
	status := "0"
	if !sshdOK {
		status = "1"
	}
	stubs := map[string]string{
		"sshd":      "#!/bin/sh\necho \"sshd $*\" >> " + s.log + "\n[ " + status + " = 0 ] || echo 'line 2: Bad configuration option' >&2\nexit " + status + "\n",
		"systemctl": "#!/bin/sh\necho \"systemctl $*\" >> " + s.log + "\n[ \"$1\" != is-active ] || [ \"$3\" = ssh ]\n",
	}
	for name, body := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s sandbox) shell() transporttest.Shell {
	return transporttest.Shell{Rewrite: func(script string) string {
		script = strings.Replace(script, "PATH=", "PATH="+s.dir+":", 1)
		return strings.Replace(script, "p="+AllowGroupsPath, "p="+transport.Quote(s.file), 1)
	}}
}

func (s sandbox) calls(t *testing.T) string {
	b, err := os.ReadFile(s.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestValidateScriptSandbox(t *testing.T) {
	tests := []struct {
		name     string
		sshdOK   bool
		previous *string
		wantFile *string
		wantLog  string
	}{
		{"valid: reload", true, nil, ptr("new\n"), "sshd -t\nsystemctl is-active --quiet ssh\nsystemctl reload ssh\n"},
		{"invalid, no previous file: removed", false, nil, nil, "sshd -t\n"},
		{"invalid: previous content restored", false, ptr("AllowGroups wheel\n"), ptr("AllowGroups wheel\n"), "sshd -t\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t, tt.sshdOK)
			if err := os.WriteFile(s.file, []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdin []byte
			if tt.previous != nil {
				stdin = []byte(*tt.previous)
			}
			_, err := s.shell().Sudo(context.Background(), validateScript(tt.previous != nil), stdin)
			if (err == nil) != tt.sshdOK {
				t.Fatalf("err = %v", err)
			}
			if !tt.sshdOK && !strings.Contains(err.Error(), "Bad configuration option") {
				t.Errorf("sshd's complaint not quoted: %v", err)
			}
			assertFile(t, s.file, tt.wantFile)
			if got := s.calls(t); got != tt.wantLog {
				t.Errorf("calls = %q, want %q", got, tt.wantLog)
			}
			if leftovers, _ := filepath.Glob(s.file + ".*"); len(leftovers) != 0 {
				t.Errorf("left behind %q", leftovers)
			}
		})
	}
}

func TestRemoveAllowGroupsSandbox(t *testing.T) {
	t.Run("removed and reloaded", func(t *testing.T) {
		s := newSandbox(t, true)
		if err := os.WriteFile(s.file, []byte("AllowGroups sudo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		removed, err := RemoveAllowGroups(context.Background(), s.shell())
		if err != nil || !removed {
			t.Fatalf("RemoveAllowGroups() = %v, %v", removed, err)
		}
		assertFile(t, s.file, nil)
		if !strings.Contains(s.calls(t), "systemctl reload ssh") {
			t.Errorf("no reload: %q", s.calls(t))
		}
	})
	t.Run("already gone", func(t *testing.T) {
		s := newSandbox(t, true)
		removed, err := RemoveAllowGroups(context.Background(), s.shell())
		if err != nil || removed {
			t.Fatalf("RemoveAllowGroups() = %v, %v, want false, nil", removed, err)
		}
	})
	t.Run("sshd rejects: file put back", func(t *testing.T) {
		s := newSandbox(t, false)
		if err := os.WriteFile(s.file, []byte("AllowGroups sudo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := RemoveAllowGroups(context.Background(), s.shell()); err == nil {
			t.Fatal("no error")
		}
		assertFile(t, s.file, ptr("AllowGroups sudo\n"))
	})
}

func assertFile(t *testing.T, path string, want *string) {
	t.Helper()
	got, err := os.ReadFile(path)
	switch {
	case want == nil && !os.IsNotExist(err):
		t.Errorf("%s should not exist (content %q, err %v)", path, got, err)
	case want != nil && (err != nil || string(got) != *want):
		t.Errorf("%s = %q, %v; want %q", path, got, err, *want)
	}
}

func ptr(s string) *string { return &s }

// sandboxHost adds a local WriteFile so the whole apply runs in the sandbox.
type sandboxHost struct {
	transporttest.Shell
	s sandbox
}

func (h sandboxHost) WriteFile(_ context.Context, f transport.File) (bool, error) {
	if old, err := os.ReadFile(h.s.file); err == nil && string(old) == string(f.Content) {
		return false, nil
	}
	return true, os.WriteFile(h.s.file, f.Content, f.Mode)
}

func TestApplyAllowGroupsSandbox(t *testing.T) {
	s := newSandbox(t, true)
	h := sandboxHost{s.shell(), s}
	ctx := context.Background()

	if _, err := ApplyAllowGroups(ctx, h, "root", []string{"sudo"}); err == nil || !strings.Contains(err.Error(), "locked out") {
		t.Fatalf("root is not in sudo here, want a refusal: %v", err)
	}
	assertFile(t, s.file, nil)

	changed, err := ApplyAllowGroups(ctx, h, "root", []string{"root"})
	if err != nil || !changed {
		t.Fatalf("ApplyAllowGroups() = %v, %v", changed, err)
	}
	want, _ := RenderAllowGroups([]string{"root"})
	assertFile(t, s.file, ptr(string(want)))

	changed, err = ApplyAllowGroups(ctx, h, "root", []string{"root"})
	if err != nil || changed {
		t.Fatalf("second ApplyAllowGroups() = %v, %v, want false, nil", changed, err)
	}
	if n := strings.Count(s.calls(t), "systemctl reload"); n != 1 {
		t.Errorf("%d reloads, want 1 (only when the file changed)", n)
	}
}

type groupsOf string

func (g groupsOf) Run(context.Context, string, []byte) (transport.Result, error) {
	return transport.Result{Stdout: []byte(g + "\n")}, nil
}

func TestCheckLoginUserKeepsAccessAsksTheNode(t *testing.T) {
	if err := CheckLoginUserKeepsAccess(context.Background(), groupsOf("admin adm sudo"), "admin", []string{"sudo"}); err != nil {
		t.Errorf("admin in sudo, restricted to sudo: %v", err)
	}
	if err := CheckLoginUserKeepsAccess(context.Background(), groupsOf("admin"), "admin", []string{"sudo"}); err == nil {
		t.Error("admin in no listed group: allowed, which would lock it out")
	}
}
