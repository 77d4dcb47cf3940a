package nodes

import (
	"context"
	_ "embed"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// AllowGroupsPath is the guide's drop-in restricting SSH to administrators.
const AllowGroupsPath = "/etc/ssh/sshd_config.d/90-allow-sudo.conf"

// SSHDHost is what managing the drop-in needs from a node.
type SSHDHost interface {
	transport.Executor
	transport.FileWriter
}

const allowGroupsHeader = "# Managed by terraform-provider-gpucluster: only these groups may log in over SSH.\n"

// RenderAllowGroups renders the drop-in for the given groups.
func RenderAllowGroups(groups []string) ([]byte, error) {
	if err := validateGroups(groups); err != nil {
		return nil, err
	}
	return []byte(allowGroupsHeader + "AllowGroups " + strings.Join(groups, " ") + "\n"), nil
}

// ParseAllowGroups returns the groups of every AllowGroups line of a drop-in.
func ParseAllowGroups(content string) []string {
	var groups []string
	for _, line := range strings.Split(content, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.EqualFold(f[0], "AllowGroups") {
			groups = append(groups, f[1:]...)
		}
	}
	return groups
}

func validateGroups(groups []string) error {
	if len(groups) == 0 {
		return fmt.Errorf("ssh_allow_groups: at least one group is required")
	}
	for _, g := range groups {
		// sshd also accepts wildcards here, but a pattern makes the lock-out check below guesswork.
		if !transport.AccountNamePattern.MatchString(g) {
			return fmt.Errorf("ssh_allow_groups: invalid group name %q: it must start with a lower-case letter "+
				"or underscore and contain only lower-case letters, digits, '_' and '-'", g)
		}
	}
	return nil
}

// Runner runs a script as the login user, without sudo.
type Runner interface {
	Run(ctx context.Context, script string, stdin []byte) (transport.Result, error)
}

// CheckLoginUserKeepsAccess refuses restricting SSH to groups that the connecting user, as
// the node sees it (`id -nG` in the provider's own session), is in none of.
func CheckLoginUserKeepsAccess(ctx context.Context, r Runner, user string, groups []string) error {
	res, err := r.Run(ctx, "id -nG", nil)
	if err != nil {
		return fmt.Errorf("list the groups of %s: %w", user, err)
	}
	return CheckMembership(user, string(res.Stdout), groups)
}

// CheckMembership refuses groups that would lock out the connecting user;
// userGroups is the output of `id -nG user`.
func CheckMembership(user, userGroups string, groups []string) error {
	have := strings.Fields(userGroups)
	for _, g := range groups {
		if slices.Contains(have, g) {
			return nil
		}
	}
	return fmt.Errorf("refusing to restrict SSH to groups %s: the connecting user %s is only in %s, "+
		"so it would be locked out; add %s to one of these groups first",
		strings.Join(groups, ", "), user, strings.Join(have, ", "), user)
}

// ApplyAllowGroups writes the drop-in, validates it with `sshd -t` and
// reloads ssh only when the file changed. If sshd rejects the new file, the
// previous content (or no file) is restored, so access is never broken.
// Round trips: one to check and save, one to write, one to validate.
func ApplyAllowGroups(ctx context.Context, h SSHDHost, loginUser string, groups []string) (changed bool, err error) {
	content, err := RenderAllowGroups(groups)
	if err != nil {
		return false, err
	}
	prev, err := prepareAllowGroups(ctx, h, loginUser, groups)
	if err != nil {
		return false, err
	}
	f := transport.File{Path: AllowGroupsPath, Content: content, Owner: "root", Group: "root", Mode: 0o644}
	changed, err = h.WriteFile(ctx, f)
	if err != nil || !changed {
		return false, err
	}
	if _, err := h.Sudo(ctx, validateScript(prev != nil), prev); err != nil {
		return true, fmt.Errorf("sshd rejected %s or ssh could not be reloaded; the previous file was restored "+
			"if sshd -t failed: %w", AllowGroupsPath, err)
	}
	transport.Changed(ctx, h, "reloaded ssh")
	return true, nil
}

var prepareBody = transport.SectionFuncs + sshdPrepare

//go:embed sshd_prepare.sh
var sshdPrepare string

// prepareAllowGroups checks the login user's groups and returns the current
// drop-in (nil when there is none) in one round trip.
func prepareAllowGroups(ctx context.Context, h SSHDHost, loginUser string, groups []string) ([]byte, error) {
	script := transport.ScriptEnv +
		"user=" + transport.Quote(loginUser) + "\np=" + transport.Quote(AllowGroupsPath) + "\n" + prepareBody
	secs, err := transport.SudoSections(ctx, h, script, "check SSH access of "+loginUser)
	if err != nil {
		return nil, err
	}
	ids, ok := secs["id"]
	if !ok || ids.Status != 0 || len(ids.Lines) == 0 {
		return nil, fmt.Errorf("check SSH access: user %s does not exist on the host", loginUser)
	}
	if err := CheckMembership(loginUser, ids.Lines[0], groups); err != nil {
		return nil, err
	}
	prev, ok := secs["previous"]
	if !ok || prev.Status != 0 {
		return nil, nil
	}
	content, err := base64.StdEncoding.DecodeString(strings.Join(prev.Lines, ""))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", AllowGroupsPath, err)
	}
	return content, nil
}

// reloadSSH reloads whichever ssh unit runs (Debian "ssh", others "sshd").
// With neither active, sshd reads the file when it next starts.
//
//go:embed reload_ssh.sh
var reloadSSH string

// validateScript expects the previous content on stdin when hadPrevious.
func validateScript(hadPrevious bool) string {
	restore := "0"
	if hadPrevious {
		restore = "1"
	}
	return transport.NewScript().Set("p", AllowGroupsPath).Set("restore", restore).Text(sshdValidate + reloadSSH).String()
}

// sshdValidate puts the previous drop-in back (restore=1, from stdin) or removes the new
// one when sshd -t rejects the configuration.
//
//go:embed sshd_validate.sh
var sshdValidate string

// RemoveAllowGroups deletes the drop-in (destroy), then validates and
// reloads. Removing an AllowGroups restriction only widens access; if sshd
// still rejects its configuration, the file is put back and the error
// names sshd's complaint. A missing file is success.
func RemoveAllowGroups(ctx context.Context, ex transport.Executor) (removed bool, err error) {
	script := transport.ScriptEnv +
		"p=" + transport.Quote(AllowGroupsPath) + "\n" + removeBody + reloadSSH
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", AllowGroupsPath, err)
	}
	removed = strings.Contains(string(res.Stdout), "removed")
	if removed {
		transport.Changed(ctx, ex, "removed "+AllowGroupsPath+" and reloaded ssh")
	}
	return removed, nil
}

// The backup name does not end in .conf, so sshd's Include ignores it.
//
//go:embed sshd_remove.sh
var removeBody string
