package transport

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// sudo's stderr as captured on the lab (Debian trixie: sudo-rs 0.2.5 as /usr/bin/sudo, sudo
// 1.9.16p2 as /usr/bin/sudo.ws) with -S -p PROMPT, "<p>" standing for the prompt, for each
// way it refused; faillock rows are pam_faillock's Debian layout of common-auth.
func TestClassifySudo(t *testing.T) {
	tests := []struct {
		name     string
		password string
		stderr   string
		want     SudoErrorKind
	}{
		{"sudo-rs wrong password", "pw", "[sudo: <p>] Password: \nsudo: Authentication failed, try again.\n[sudo: <p>] Password: ", SudoWrongPassword},
		{"sudo-rs wrong password, faillock [default=die]", "pw", "[sudo: <p>] Password: \nsudo-rs: PAM error: Permission denied\n", SudoWrongPassword},
		{"sudo-rs account locked by faillock, right password", "pw", "[sudo: <p>] Password: \nsudo: Authentication failed, try again.\n[sudo: <p>] Password: ", SudoWrongPassword},
		{"sudo-rs after three prompts", "pw", "[sudo: <p>] Password: \nsudo-rs: Maximum 3 incorrect authentication attempts\n", SudoWrongPassword},
		{"sudo.ws wrong password, faillock [default=die] or locked", "pw", "<p>Sorry, try again.\n<p>", SudoWrongPassword},
		{"sudo.ws after its attempts", "pw", "<p>\nsudo: 1 incorrect password attempt\n", SudoWrongPassword},
		{"sudo-rs not in sudoers", "pw", "sudo-rs: I'm sorry tnosudo. I'm afraid I can't do that\n", SudoNotAllowed},
		{"sudo.ws not in sudoers", "pw", "<p>tnosudo is not in the sudoers file.\n", SudoNotAllowed},
		{"sudo-rs -n", "", "sudo-rs: interactive authentication is required\n", SudoPasswordRequired},
		{"sudo.ws -n", "", "sudo: a password is required\n", SudoPasswordRequired},
		{"sudo_exe missing", "pw", "sh: 1: exec: /usr/bin/nosudo: not found\n", SudoFailed},
		{"PAM error before any prompt", "pw", "sudo-rs: PAM error: Permission denied\n", SudoFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSudoWatcher([]byte(tt.password))
			w.parser.prompt = "<p>"
			ev := w.parser.feed([]byte(tt.stderr))
			if got := classifySudo(w.sudoStderr(), w.answered(), ev.prompts > 1); got != tt.want {
				t.Errorf("kind %d, want %d (sudo said %q)", got, tt.want, w.sudoStderr())
			}
		})
	}
}

// faillock.sh's output on a lab host with Debian's layout after three wrong passwords at
// sudo, then variants of it.
const lockedProbe = `now 1796289660
pam auth required pam_faillock.so preauth
pam auth [default=die] pam_faillock.so authfail
tally admin:
tally When                Type  Source                                           Valid
tally 2026-12-03 09:20:39 SVC   sudo                                                 V
tally 2026-12-03 09:20:44 SVC   sudo                                                 V
tally 2026-12-03 09:20:48 SVC   sudo                                                 V
`

func TestParseFaillock(t *testing.T) {
	at := func(s string) string {
		tm, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return "now " + strconv.FormatInt(tm.Unix(), 10)
	}
	replace := func(old, new string) string { return strings.Replace(lockedProbe, old, new, 1) }
	tests := []struct {
		name     string
		probe    string
		locked   bool
		unlockIn time.Duration
	}{
		{"three failures, deny 3, a minute ago", replace("now 1796289660", at("2026-12-03 09:21:48")), true, 9 * time.Minute},
		{"unlock_time passed", replace("now 1796289660", at("2026-12-03 09:31:49")), false, 0},
		{"unlock_time from faillock.conf", replace("now 1796289660", at("2026-12-03 09:31:49")+"\nconf unlock_time = 3600"), true, 48*time.Minute + 59*time.Second},
		{"module option beats faillock.conf", replace("now 1796289660", at("2026-12-03 09:21:48")+"\nconf deny = 3") + "pam auth required pam_faillock.so preauth deny=5\n", false, 0},
		{"unlock_time never", replace("now 1796289660", at("2026-12-04 09:21:48")+"\nconf unlock_time = never"), true, 0},
		{"a failure marked invalid", replace("sudo                                                 V\ntally 2026-12-03 09:20:48", "sudo                                                 I\ntally 2026-12-03 09:20:48"), false, 0},
		{"failures further apart than fail_interval", replace("2026-12-03 09:20:39", "2026-12-03 09:00:39"), false, 0},
		{"no pam_faillock in sudo's stack", replace("pam auth required pam_faillock.so preauth\npam auth [default=die] pam_faillock.so authfail\n", ""), false, 0},
		{"empty tally", "now 1796289660\npam auth required pam_faillock.so preauth\ntally admin:\n", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tally, locked := parseFaillock(tt.probe)
			if locked != tt.locked || tally.UnlockIn != tt.unlockIn {
				t.Errorf("locked %v unlock in %s, want %v %s", locked, tally.UnlockIn, tt.locked, tt.unlockIn)
			}
			if locked && (tally.Failures != 3 || tally.Deny != 3) {
				t.Errorf("tally %+v, want 3 failures of deny 3", tally)
			}
		})
	}
}
