package transport

import (
	"strings"
	"testing"
)

// Transcripts of stderr as measured on Debian trixie (sudo-rs 0.2.5 and
// sudo 1.9.16p2) with -S -p PROMPT; "<p>" and "<m>" stand for prompt and marker.
func TestSudoStderrParsing(t *testing.T) {
	tests := []struct {
		name        string
		stderr      string
		wantPrompts int
		wantStarted bool
		wantSudo    string
		wantCommand string
	}{
		{"sudo-rs password accepted", "[sudo: <p>] Password: \n<m>warning from the command\n", 1, true, "", "warning from the command\n"},
		{"classic sudo password accepted", "<p><m>warning from the command\n", 1, true, "", "warning from the command\n"},
		{"nopasswd", "<m>out", 0, true, "", "out"},
		{"host name warning before the prompt", "sudo: unable to resolve host vm: Name or service not known\n<p><m>", 1, true, "sudo: unable to resolve host vm: Name or service not known", ""},
		{"sudo-rs wrong password", "[sudo: <p>] Password: \nsudo: Authentication failed, try again.\n[sudo: <p>] Password: \n", 2, false, "sudo: Authentication failed, try again.", ""},
		{"classic sudo wrong password", "<p>Sorry, try again.\n<p>", 2, false, "Sorry, try again.", ""},
		{"sudo-rs -n needs a password", "sudo-rs: interactive authentication is required\n", 0, false, "sudo-rs: interactive authentication is required", ""},
		{"not in sudoers", "admin is not in the sudoers file.\n", 0, false, "admin is not in the sudoers file.", ""},
		{"command prints the prompt and marker", "<p><m><p> and <m> again", 1, true, "", "<p> and <m> again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Feeding one byte at a time proves prompt and marker are
			// found when split across reads.
			for _, chunk := range []int{1, 3, len(tt.stderr) + 1} {
				s := sudoStderr{prompt: "<p>", marker: "<m>"}
				maxPrompts, started := 0, 0
				for rest := tt.stderr; rest != ""; {
					n := min(chunk, len(rest))
					ev := s.feed([]byte(rest[:n]))
					rest = rest[n:]
					maxPrompts = max(maxPrompts, ev.prompts)
					if ev.started {
						started++
					}
				}
				if maxPrompts != tt.wantPrompts || s.started != tt.wantStarted || started > 1 {
					t.Errorf("chunk %d: prompts %d started %v (%d events), want %d %v", chunk, maxPrompts, s.started, started, tt.wantPrompts, tt.wantStarted)
				}
				if got := s.sudoOutput(); got != tt.wantSudo {
					t.Errorf("chunk %d: sudo output %q, want %q", chunk, got, tt.wantSudo)
				}
				if got := string(s.post); got != tt.wantCommand {
					t.Errorf("chunk %d: command stderr %q, want %q", chunk, got, tt.wantCommand)
				}
			}
		})
	}
}

func TestSudoCommandLine(t *testing.T) {
	withPassword := newSudoWatcher([]byte("s3cret pw"))
	cmd := withPassword.command("/usr/bin/sudo.ws", "id -u")
	if strings.Contains(cmd, "s3cret") {
		t.Fatalf("the password is on the command line: %s", cmd)
	}
	for _, want := range []string{"/usr/bin/sudo.ws -k -S -p " + withPassword.parser.prompt + " -- /usr/bin/perl -e ", withPassword.parser.marker} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %s lacks %q", cmd, want)
		}
	}
	passwordless := newSudoWatcher(nil).command("sudo", "id -u")
	if !strings.HasPrefix(passwordless, "sudo -k -n -- /usr/bin/perl -e ") || strings.Contains(passwordless, " -S ") {
		t.Errorf("passwordless command %s should use -n and not -S", passwordless)
	}
	first, second := newSudoWatcher(nil), newSudoWatcher(nil)
	if first.parser.marker == second.parser.marker {
		t.Error("markers repeat between invocations; a command could fake one")
	}
}

func TestSudoErrorMessages(t *testing.T) {
	tests := []struct {
		err  *SudoError
		want string
	}{
		{&SudoError{Host: "gpu01", User: "admin", Kind: SudoWrongPassword}, "sudo rejected the password for admin on gpu01"},
		{&SudoError{Host: "gpu01", User: "admin", Kind: SudoPasswordRequired}, "sudo on gpu01 requires a password for admin and no sudo password is configured"},
		{&SudoError{Host: "gpu01", User: "admin", Kind: SudoWrongPassword, Stderr: "sudo-rs: PAM error: Permission denied\n"}, "sudo rejected the password for admin on gpu01 (sudo-rs: PAM error: Permission denied)"},
		{&SudoError{Host: "gpu01", User: "admin", Kind: SudoAccountLocked, Stderr: "Sorry, try again.", Faillock: &FaillockTally{Failures: 3, Deny: 3}}, "sudo refused admin on gpu01: pam_faillock has locked the account after 3 failed authentications (deny=3) (Sorry, try again.)"},
		{&SudoError{Host: "gpu01", User: "admin", Kind: SudoNotAllowed, Stderr: "admin is not in the sudoers file.\n"}, "sudoers on gpu01 does not let admin run commands as root (admin is not in the sudoers file.)"},
		{&SudoError{Host: "gpu01", User: "admin", Exe: "sudo", Kind: SudoFailed, Stderr: "sudo: unable to open /etc/sudoers\n"}, "sudo (sudo) failed on gpu01 for admin before running the command: sudo: unable to open /etc/sudoers"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestAsksForPassword(t *testing.T) {
	tests := map[string]bool{
		"sudo: a password is required":                    true,
		"sudo-rs: interactive authentication is required": true,
		"admin is not in the sudoers file.":               false,
	}
	for stderr, want := range tests {
		if got := asksForPassword(stderr); got != want {
			t.Errorf("asksForPassword(%q) = %v, want %v", stderr, got, want)
		}
	}
}
