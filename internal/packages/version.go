package packages

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// VersionPattern is Debian policy's version (section 5.6.12): an optional numeric epoch,
// an upstream version starting with a digit, and an optional revision after the last '-'.
var VersionPattern = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$`)

// ValidateVersion refuses anything that is not a Debian version, so that name=version
// reaches apt as one word it can read.
func ValidateVersion(v string) error {
	if !VersionPattern.MatchString(v) || strings.HasSuffix(v, "-") {
		return fmt.Errorf("%q is not a Debian package version (such as 24.11.5-4+deb13u1: digits first, then letters, digits, '.', '+', '~', '-')", v)
	}
	return nil
}

// Upstream is the version without its epoch and Debian revision: "24.11.5" of
// "1:24.11.5-4+deb13u1".
func Upstream(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 && !strings.ContainsAny(v[:i], ".-+~") {
		v = v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	return v
}

// CompareVersions orders two Debian versions as dpkg --compare-versions does: negative
// when a is older than b, zero when equal, positive when newer.
func CompareVersions(a, b string) int {
	ea, ua, ra := splitVersion(a)
	eb, ub, rb := splitVersion(b)
	if c := compareNumbers(ea, eb); c != 0 {
		return c
	}
	if c := comparePart(ua, ub); c != 0 {
		return c
	}
	return comparePart(ra, rb)
}

func splitVersion(v string) (epoch, upstream, revision string) {
	epoch = "0"
	if i := strings.IndexByte(v, ':'); i >= 0 {
		epoch, v = v[:i], v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// comparePart compares alternating runs of non-digits (by order, where '~' sorts before
// anything, even the end, and letters before other characters) and of digits (by value).
func comparePart(a, b string) int {
	for a != "" || b != "" {
		var na, nb string
		na, a = leading(a, false)
		nb, b = leading(b, false)
		if c := compareLexical(na, nb); c != 0 {
			return c
		}
		na, a = leading(a, true)
		nb, b = leading(b, true)
		if c := compareNumbers(na, nb); c != 0 {
			return c
		}
	}
	return 0
}

func leading(s string, digits bool) (run, rest string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digits {
		i++
	}
	return s[:i], s[i:]
}

func compareLexical(a, b string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		if c := order(a, i) - order(b, i); c != 0 {
			return c
		}
	}
	return 0
}

// order is dpkg's weight of the character at i: the end of the run sorts after '~' and
// before everything else, letters before the other characters.
func order(s string, i int) int {
	switch {
	case i >= len(s):
		return 0
	case s[i] == '~':
		return -1
	case s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z':
		return int(s[i])
	default:
		return int(s[i]) + 256
	}
}

func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// policyRCD is the file deb-systemd-invoke and invoke-rc.d ask before they start or restart a
// daemon from a package's maintainer script; exit status 101 forbids it.
const policyRCD = "/usr/sbin/policy-rc.d"

// InstallHeld installs every package at version, in one apt transaction (packages built
// from one source often depend on each other's exact version), while the packages' own
// scripts may not start or restart any daemon: the caller restarts them in the order they
// need. A policy-rc.d already on the host is left as it is; one this function wrote and an
// interrupted run left behind is removed.
func InstallHeld(ctx context.Context, ex transport.Executor, version string, names ...string) error {
	if err := validateNames(names); err != nil {
		return err
	}
	if err := ValidateVersion(version); err != nil {
		return err
	}
	pinned := make([]string, len(names))
	for i, n := range names {
		pinned[i] = n + "=" + version
	}
	if _, err := ex.Sudo(ctx, installHeldScript(pinned), nil); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(pinned, " "), err)
	}
	transport.Changed(ctx, ex, "installed "+strings.Join(pinned, " "))
	return nil
}

const heldMarker = "# gpucluster: daemon restarts held during a pinned install"

func installHeldScript(pinned []string) string {
	return transport.NewScript().Args(pinned...).Set("p", policyRCD).Set("marker", heldMarker).Text(holdRestarts).Text(installText).String()
}

// holdRestarts keeps package scripts from restarting daemons during the install (policy-rc.d
// answers 101), with a marker so that a file it left behind is told from one the admin wrote.
//
//go:embed hold_restarts.sh
var holdRestarts string

// ErrDowngrade means a pinned version is older than the one installed: apt does not install it
// without being told to downgrade, and the provider does not tell it.
var ErrDowngrade = errors.New("older than the installed version")

// CheckNoDowngrade refuses to go from the installed version to an older one; from "" (nothing
// installed) allows any version.
func CheckNoDowngrade(from, to string) error {
	if from != "" && CompareVersions(to, from) < 0 {
		return fmt.Errorf("%s is %w %s", to, ErrDowngrade, from)
	}
	return nil
}

// Pin brings every named package to version: when one is missing or at another version, all
// of them are installed at it in one apt transaction with the packages' own daemon restarts
// held (see InstallHeld), for packages built from one source depend on each other's exact
// version. It refuses a downgrade before touching anything, and returns the packages whose
// version changed, sorted; none when all were at version, and then it ran only the query.
func Pin(ctx context.Context, ex transport.Executor, version string, names ...string) ([]string, error) {
	if err := ValidateVersion(version); err != nil {
		return nil, err
	}
	installed, err := Installed(ctx, ex, names...)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, n := range names {
		if err := CheckNoDowngrade(installed[n], version); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if installed[n] == "" || CompareVersions(installed[n], version) != 0 {
			changed = append(changed, n)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	sort.Strings(changed)
	return changed, InstallHeld(ctx, ex, version, names...)
}
