package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSudo behaves like sudo-rs as measured on trixie: it prompts on stderr
// as "[sudo: PROMPT] Password: ", allows three attempts, and refuses -n
// when a password is needed. Its password is "right pw".
const fakeSudo = `#!/bin/sh
prompt=; nonint=
while :; do
	case "$1" in
	-k|-S) shift;;
	-p) prompt=$2; shift 2;;
	-n) nonint=1; shift;;
	--) shift; break;;
	*) break;;
	esac
done
if [ -n "$nonint" ]; then echo "sudo-rs: interactive authentication is required" >&2; exit 1; fi
tries=0
while [ $tries -lt 3 ]; do
	printf '[sudo: %s] Password: ' "$prompt" >&2
	IFS= read -r pw || pw=
	echo >&2
	if [ "$pw" = "right pw" ]; then exec "$@"; fi
	echo "sudo: Authentication failed, try again." >&2
	tries=$((tries+1))
done
echo "sudo-rs: Maximum 3 incorrect authentication attempts" >&2
exit 1
`

// fakeNopasswdSudo is sudo with NOPASSWD: it runs the command at once.
const fakeNopasswdSudo = `#!/bin/sh
while [ "$1" != -- ]; do shift; done
shift
exec "$@"
`

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sudo")
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func sudoHost(t *testing.T, sudoScript string, password string) *Host {
	t.Helper()
	client := newTestClient(t)
	srv := newTestServer(t, client)
	cfg := clientConfig(t, client, srv, srv)
	cfg.SudoExe = writeScript(t, sudoScript)
	cfg.SudoPassword = []byte(password)
	h, err := newTestPool(t).Host(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSudo(t *testing.T) {
	tests := []struct {
		name     string
		sudo     string
		password string
		wantKind SudoErrorKind
		wantOK   bool
	}{
		{"password accepted", fakeSudo, "right pw", 0, true},
		{"nopasswd with a password configured", fakeNopasswdSudo, "right pw", 0, true},
		{"passwordless", fakeNopasswdSudo, "", 0, true},
		{"wrong password", fakeSudo, "wrong pw", SudoWrongPassword, false},
		{"password needed but none configured", fakeSudo, "", SudoPasswordRequired, false},
		{"sudo missing", "#!/bin/sh\necho 'sudo: command not found' >&2\nexit 127\n", "", SudoFailed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := sudoHost(t, tt.sudo, tt.password)
			res, err := h.Sudo(testContext(t), "cat; echo to-stderr >&2", []byte("payload\nwith lines\n"))
			if tt.wantOK {
				if err != nil {
					t.Fatalf("Sudo: %v", err)
				}
				if string(res.Stdout) != "payload\nwith lines\n" || string(res.Stderr) != "to-stderr\n" {
					t.Errorf("stdout %q stderr %q; want the payload back and only the command's stderr", res.Stdout, res.Stderr)
				}
				return
			}
			var sudoErr *SudoError
			if !errors.As(err, &sudoErr) || sudoErr.Kind != tt.wantKind {
				t.Fatalf("got %v, want a SudoError of kind %d", err, tt.wantKind)
			}
			if tt.password != "" && strings.Contains(err.Error()+string(res.Stderr), tt.password) {
				t.Errorf("the password leaked into %q / %q", err, res.Stderr)
			}
			if strings.Contains(string(res.Stdout), "payload") {
				t.Error("the payload reached a command that never started")
			}
		})
	}
}

func TestSudoReportsCommandFailure(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	res, err := h.Sudo(testContext(t), "echo no such user >&2; exit 6", nil)
	var exitErr *ExitError
	if !errors.As(err, &exitErr) || exitErr.Status != 6 || exitErr.Stderr != "no such user\n" || res.Status != 6 {
		t.Fatalf("got %v (status %d), want ExitError 6 with only the command's stderr", err, res.Status)
	}
}

func TestReadAndWriteFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("WriteFile chowns to root: run as root")
	}
	ctx := testContext(t)
	h := sudoHost(t, fakeSudo, "right pw")
	dir := t.TempDir()
	path := filepath.Join(dir, "slurm.conf")

	if _, exists, err := h.ReadFile(ctx, path); err != nil || exists {
		t.Fatalf("ReadFile of a missing file: exists=%v err=%v", exists, err)
	}
	f := File{Path: path, Content: []byte("it's $secret\n"), Mode: 0o640}
	steps := []struct {
		name        string
		before      func()
		wantChanged bool
	}{
		{"create", func() {}, true},
		{"same content", func() {}, false},
		{"mode drift", func() { _ = os.Chmod(path, 0o666) }, true},
		{"after repair", func() {}, false},
		{"content drift", func() { _ = os.WriteFile(path, []byte("edited by hand\n"), 0o640) }, true},
	}
	for _, step := range steps {
		step.before()
		changed, err := h.WriteFile(ctx, f)
		if err != nil || changed != step.wantChanged {
			t.Fatalf("%s: changed=%v err=%v, want changed=%v", step.name, changed, err, step.wantChanged)
		}
		got, exists, err := h.ReadFile(ctx, path)
		if err != nil || !exists || string(got) != string(f.Content) {
			t.Fatalf("%s: read back %q exists=%v err=%v", step.name, got, exists, err)
		}
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o640 {
			t.Fatalf("%s: mode %v, err %v", step.name, info.Mode(), err)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*")); len(leftovers) != 0 {
		t.Errorf("temp files left behind: %q", leftovers)
	}
	if _, err := h.WriteFile(ctx, File{Path: dir, Content: []byte("x")}); err == nil {
		t.Error("WriteFile over a directory succeeded")
	}
}

func TestConditionalWriteFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("WriteFile chowns to root: run as root")
	}
	ctx := testContext(t)
	h := sudoHost(t, fakeSudo, "right pw")
	path := filepath.Join(t.TempDir(), "uid-ledger")
	sum := func(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }

	if _, err := h.WriteFile(ctx, File{Path: path, Content: []byte("one\n"), ExpectSHA256: Absent}); err != nil {
		t.Fatalf("create when absent: %v", err)
	}
	if _, err := h.WriteFile(ctx, File{Path: path, Content: []byte("two\n"), ExpectSHA256: Absent}); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("create over an existing file: %v, want ErrWriteConflict", err)
	}
	if _, err := h.WriteFile(ctx, File{Path: path, Content: []byte("two\n"), ExpectSHA256: sum("stale\n")}); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("write after someone else's: %v, want ErrWriteConflict", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one\n" {
		t.Fatalf("a refused write changed the file to %q", got)
	}
	if changed, err := h.WriteFile(ctx, File{Path: path, Content: []byte("two\n"), ExpectSHA256: sum("one\n")}); err != nil || !changed {
		t.Fatalf("write on the expected content: changed=%v err=%v", changed, err)
	}
	if _, err := writeFileScript(File{Path: path, ExpectSHA256: "$(id)"}); err == nil {
		t.Error("a malformed ExpectSHA256 reached the script")
	}
}

func TestWriteFileRejectsBadInput(t *testing.T) {
	tests := []File{
		{Path: "relative/path"},
		{Path: "/etc/../etc/passwd"},
		{Path: "/"},
		{Path: "/etc/x", Owner: "root;id"},
		{Path: "/etc/x", Group: "$(id)"},
	}
	for _, f := range tests {
		if _, err := writeFileScript(f); err == nil {
			t.Errorf("writeFileScript(%+v) accepted bad input", f)
		}
	}
}

func TestUnixMode(t *testing.T) {
	tests := map[os.FileMode]uint32{
		0:                            0o644,
		0o600:                        0o600,
		0o755 | os.ModeSetuid:        0o4755,
		0o2775&0o777 | os.ModeSetgid: 0o2775,
		0o777 | os.ModeSticky:        0o1777,
	}
	for in, want := range tests {
		if got := unixMode(in); got != want {
			t.Errorf("unixMode(%v) = %o, want %o", in, got, want)
		}
	}
}

// A payload larger than the SSH window must flow while stderr is drained.
func TestSudoLargePayload(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	payload := []byte(strings.Repeat("0123456789abcdef", 3<<16))
	res, err := h.Sudo(testContext(t), "wc -c; yes warning | head -n 20000 >&2", payload)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "3145728" {
		t.Errorf("the command read %s bytes, want 3145728", got)
	}
	if got := strings.Count(string(res.Stderr), "warning\n"); got != 20000 {
		t.Errorf("got %d lines of stderr, want 20000", got)
	}
}
