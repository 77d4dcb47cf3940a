package provider

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// The two sudos of the lab: sudo-rs is /usr/bin/sudo, classic sudo is /usr/bin/sudo.ws.
var labSudos = []string{"/usr/bin/sudo", "/usr/bin/sudo.ws"}

// debianFaillock is pam_faillock as pam_faillock(8) and Debian's hardening guides set it up in
// common-auth: preauth before pam_unix, authfail after it with the given control, so that
// control decides how PAM ends a wrong password.
func debianFaillock(control string) string {
	return `auth required pam_faillock.so preauth
auth [success=2 default=ignore] pam_unix.so nullok
auth ` + control + ` pam_faillock.so authfail
auth requisite pam_deny.so
auth required pam_permit.so
`
}

// withFaillockEverywhere installs debianFaillock(control) on every lab host, with
// pam_faillock's account check first in the PAM file account, and an empty tally; it puts the
// hosts back as they were when the test ends: the same files, byte for byte, and an empty
// tally.
func withFaillockEverywhere(t *testing.T, l *lab.Lab, control, account string) {
	t.Helper()
	files := "/etc/pam.d/common-auth " + account
	for _, h := range l.Hosts {
		before := onHost(t, l, h.Name, "sha256sum "+files)
		onHost(t, l, h.Name, "for f in "+files+"; do cp -p $f $f.gpucluster-test || exit 1; done"+
			" && printf '%s' "+shellQuote(debianFaillock(control))+" > /etc/pam.d/common-auth"+
			" && { echo 'account required pam_faillock.so'; cat "+account+".gpucluster-test; } > "+account+
			" && faillock --user "+l.AdminUser+" --reset")
		t.Cleanup(func() {
			onHost(t, l, h.Name, "for f in "+files+"; do mv -f $f.gpucluster-test $f || exit 1; done && faillock --user "+l.AdminUser+" --reset")
			if after := onHost(t, l, h.Name, "sha256sum "+files); after != before {
				t.Errorf("%s: PAM files not restored:\n%s\nwant\n%s", h.Name, after, before)
			}
		})
	}
}

// faillockFailures is the number of valid failures pam_faillock holds for the admin on host.
func faillockFailures(t *testing.T, l *lab.Lab, host string) string {
	t.Helper()
	return onHost(t, l, host, "faillock --user "+l.AdminUser+" | grep -c ' V$' || true")
}

// sudoUsersConfig is twenty users on every node, reached with the given sudo and password.
func sudoUsersConfig(l *lab.Lab, exe, password string) string {
	return strings.Replace(twentyUsersConfig(l, password), `login_node       = "login01"`, fmt.Sprintf("login_node       = \"login01\"\n  sudo_exe         = %q", exe), 1)
}

// failingRun applies config, which must fail, and returns Terraform's error output.
func failingRun(t *testing.T, config string) (output string, runs int32) {
	t.Helper()
	var count atomic.Int32
	var mu sync.Mutex
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: countingFactories(&count),
		ErrorCheck: func(err error) error {
			mu.Lock()
			defer mu.Unlock()
			output = err.Error()
			return nil
		},
		Steps: []resource.TestStep{{Config: config}},
	})
	if output == "" {
		t.Fatal("the run succeeded, want it refused by sudo")
	}
	return output, count.Load()
}

var diagnosticSummary = regexp.MustCompile(`(?m)^\s*Error: (.+)$`)

// inOrder matches the sentences in this order as Terraform prints them, wrapped at any space.
func inOrder(sentences ...string) *regexp.Regexp {
	parts := make([]string, len(sentences))
	for i, s := range sentences {
		parts[i] = wrapped(s)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// causesPerNode checks Terraform's output for one diagnostic of cause per node and nothing but
// the short "Sudo Refused Earlier" besides, and that each cause's text matches want.
func causesPerNode(t *testing.T, l *lab.Lab, output, cause string, want func(node string) *regexp.Regexp) {
	t.Helper()
	starts := diagnosticSummary.FindAllStringSubmatchIndex(output, -1)
	perNode := map[string]int{}
	for i, m := range starts {
		end := len(output)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		summary, body := output[m[2]:m[3]], output[m[0]:end]
		switch summary {
		case cause:
			node := regexp.MustCompile(`on node (\S+)\.`).FindStringSubmatch(body)
			if node == nil {
				t.Errorf("%s names no node:\n%s", cause, body)
				continue
			}
			perNode[node[1]]++
			if !want(node[1]).MatchString(body) {
				t.Errorf("%s on %s does not match %s:\n%s", cause, node[1], want(node[1]), body)
			}
		case "Sudo Refused Earlier":
		default:
			t.Errorf("unexpected diagnostic %q:\n%s", summary, body)
		}
	}
	for _, h := range l.Hosts {
		if perNode[h.Name] != 1 {
			t.Errorf("%s: %d %q diagnostics, want exactly 1 (%d diagnostics in all)", h.Name, perNode[h.Name], cause, len(starts))
		}
	}
}

// A wrong password under pam_faillock, whether its authfail line ends the stack
// ([default=die], where sudo-rs reports "PAM error: Permission denied" instead of asking
// again) or not (required), with either sudo, is "Sudo Password Rejected" once per node; every
// other resource stopped by it gets the short "Sudo Refused Earlier". Each node's journal and
// tally hold one failed authentication.
func TestAccSudo_wrongPasswordUnderFaillock(t *testing.T) {
	l := lab.Require(t)
	for _, control := range []string{"[default=die]", "required"} {
		for _, exe := range labSudos {
			t.Run(control+" "+exe, func(t *testing.T) {
				withFaillockEverywhere(t, l, control, "/etc/pam.d/common-account")
				before := journalCounts(t, l, journalSudoFailure)
				output, runs := failingRun(t, sudoUsersConfig(l, exe, "not the password"))
				causesPerNode(t, l, output, "Sudo Password Rejected", func(string) *regexp.Regexp {
					return inOrder("Check sudo_password", "tries the password once per node per run")
				})
				assertPerRun(t, "failed sudo authentications", before, journalCounts(t, l, journalSudoFailure), runs)
				for _, h := range l.Hosts {
					if n := faillockFailures(t, l, h.Name); n != "1" {
						t.Errorf("%s: pam_faillock recorded %s failures of %s, want 1", h.Name, n, l.AdminUser)
					}
				}
			})
		}
	}
}

// lockAdmin makes pam_faillock lock the admin on every host as it would after three wrong
// passwords typed at sudo: three failed authentications, its deny count.
func lockAdmin(t *testing.T, l *lab.Lab) {
	t.Helper()
	for _, h := range l.Hosts {
		out := onHost(t, l, h.Name, "for i in 1 2 3; do printf 'wrong\\n' | runuser -u "+l.AdminUser+" -- /usr/bin/sudo -k -S -p '' true >/dev/null 2>&1; done; faillock --user "+l.AdminUser+" | grep -c ' V$' || true")
		if out != "3" {
			t.Fatalf("%s: %s failures recorded after three wrong passwords, want 3", h.Name, out)
		}
	}
}

// With the admin locked by pam_faillock, the right password is refused like a wrong one by
// both sudos, which say nothing of the lock. The provider reads the tally and says "Account
// Locked", once per node, naming faillock's reset to run there; the run adds no failure.
// pam_faillock's account check is in sudo's own stack here: in common-account, sshd's account
// phase would reset the tally at the provider's key login and unlock the account.
func TestAccSudo_accountLockedByFaillock(t *testing.T) {
	l := lab.Require(t)
	withFaillockEverywhere(t, l, "[default=die]", "/etc/pam.d/sudo")
	lockAdmin(t, l)
	for _, exe := range labSudos {
		t.Run(exe, func(t *testing.T) {
			output, _ := failingRun(t, sudoUsersConfig(l, exe, l.AdminPassword))
			causesPerNode(t, l, output, "Account Locked", func(node string) *regexp.Regexp {
				return inOrder("pam_faillock on "+node+" has locked "+l.AdminUser+" after 3 failed authentications (deny=3)",
					"As root on "+node+", run faillock --user "+l.AdminUser+" --reset", "tries the password once per node per run")
			})
			for _, h := range l.Hosts {
				if n := faillockFailures(t, l, h.Name); n != "3" {
					t.Errorf("%s: pam_faillock holds %s failures of %s after the run, want the 3 that locked it", h.Name, n, l.AdminUser)
				}
			}
		})
	}
}

// withoutSudoGroup takes the admin out of group sudo on every lab host, so sudoers no longer
// lets it run commands as root, and puts the account files back when the test ends.
func withoutSudoGroup(t *testing.T, l *lab.Lab) {
	t.Helper()
	const files = "/etc/group /etc/gshadow /etc/group- /etc/gshadow-"
	for _, h := range l.Hosts {
		before := onHost(t, l, h.Name, "sha256sum "+files)
		onHost(t, l, h.Name, "for f in "+files+"; do cp -p $f $f.gpucluster-test || exit 1; done && gpasswd -d "+l.AdminUser+" sudo >/dev/null")
		t.Cleanup(func() {
			onHost(t, l, h.Name, "for f in "+files+"; do mv -f $f.gpucluster-test $f || exit 1; done")
			if after := onHost(t, l, h.Name, "sha256sum "+files); after != before {
				t.Errorf("%s: account files not restored:\n%s\nwant\n%s", h.Name, after, before)
			}
		})
	}
}

// An admin that sudoers does not let run commands as root is told so, once per node, with
// either sudo (sudo-rs refuses before asking the password, sudo.ws after it), and no password
// advice: the password was never the problem.
func TestAccSudo_notAllowedBySudoers(t *testing.T) {
	l := lab.Require(t)
	withoutSudoGroup(t, l)
	for _, exe := range labSudos {
		t.Run(exe, func(t *testing.T) {
			output, _ := failingRun(t, sudoUsersConfig(l, exe, l.AdminPassword))
			causesPerNode(t, l, output, "Sudo Not Allowed", func(node string) *regexp.Regexp {
				return inOrder("Let "+l.AdminUser+" run commands as root with "+exe+" on "+node, "sudoers refuses it")
			})
		})
	}
}
