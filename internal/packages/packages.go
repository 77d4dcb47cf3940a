package packages

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// ValidateName refuses anything that is not a Debian package name.
func ValidateName(name string) error {
	if !transport.PackageNamePattern.MatchString(name) {
		return fmt.Errorf("%q is not a Debian package name (lower case letters, digits, '+', '-', '.', at least two characters)", name)
	}
	return nil
}

// dpkgQueryNotFound is dpkg-query's exit status when some package is unknown.
const dpkgQueryNotFound = 1

// Installed reports the installed version of each package, "" for one that is
// not installed (unknown, removed, or only its configuration left), in one
// round trip: none of its own when every name is one a package shares (Share).
func Installed(ctx context.Context, ex transport.Executor, names ...string) (map[string]string, error) {
	if err := validateNames(names); err != nil {
		return nil, err
	}
	versions := make(map[string]string, len(names))
	if len(names) == 0 {
		return versions, nil
	}
	lines, err := statusLines(ctx, ex, names)
	if err != nil {
		return nil, fmt.Errorf("query installed packages %s: %w", strings.Join(names, " "), err)
	}
	for _, n := range names {
		versions[n] = ""
	}
	for _, line := range lines {
		name, version, ok := parseStatusLine(line)
		if _, wanted := versions[name]; ok && wanted {
			versions[name] = version
		}
	}
	return versions, nil
}

// statusLines asks dpkg-query about names: through the host's shared read when every name is
// shared, else in a read of its own.
func statusLines(ctx context.Context, ex transport.Executor, names []string) ([]string, error) {
	if sharedAll(names) {
		sec, err := units.ReadShared(ctx, ex, sharedSection)
		if err != nil {
			return nil, err
		}
		if sec.Status != 0 && sec.Status != dpkgQueryNotFound {
			return nil, fmt.Errorf("dpkg-query exited with status %d", sec.Status)
		}
		return sec.Lines, nil
	}
	res, err := ex.Read(ctx, installedScript(names))
	if err != nil && !someNotFound(err) {
		return nil, err
	}
	return strings.Split(string(res.Stdout), "\n"), nil
}

// someNotFound tells dpkg-query's "some package is unknown", after which the
// others are still listed, from a failure.
func someNotFound(err error) bool {
	var exitErr *transport.ExitError
	return errors.As(err, &exitErr) && exitErr.Status == dpkgQueryNotFound
}

func installedScript(names []string) string {
	return transport.NewScript().Command(queryArgv(names)...).String()
}

func queryArgv(names []string) []string {
	return append([]string{"dpkg-query", "-W", "-f", `${Package}\t${db:Status-Abbrev}\t${Version}\n`, "--"}, names...)
}

// parseStatusLine reads "name<TAB>ii <TAB>version". The second letter of the
// status abbreviation is the package's state; only 'i' is installed.
func parseStatusLine(line string) (name, version string, installed bool) {
	fields := strings.Split(line, "\t")
	if len(fields) != 3 || len(fields[1]) < 2 || fields[1][1] != 'i' {
		return "", "", false
	}
	return fields[0], fields[2], true
}

// Ensure installs the packages that are not installed yet, without
// recommends and without questions, and returns their names; when every
// package is present it runs nothing but the query.
func Ensure(ctx context.Context, ex transport.Executor, names ...string) (installed []string, err error) {
	versions, err := Installed(ctx, ex, names...)
	if err != nil {
		return nil, err
	}
	var missing []string
	for name, version := range versions {
		if version == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	sort.Strings(missing)
	if _, err := ex.Sudo(ctx, installScript(missing), nil); err != nil {
		return nil, fmt.Errorf("apt-get install %s: %w", strings.Join(missing, " "), err)
	}
	transport.Changed(ctx, ex, "installed "+strings.Join(missing, " "))
	return missing, nil
}

// installScript waits for a dpkg lock held by another apt run instead of
// failing, keeps changed configuration files as they are, and refreshes the
// package lists once only when the first attempt fails, as stale lists name
// versions the mirror no longer has.
func installScript(names []string) string {
	return transport.NewScript().Args(names...).Text(installText).String()
}

//go:embed install.sh
var installText string

func validateNames(names []string) error {
	for _, n := range names {
		if err := ValidateName(n); err != nil {
			return err
		}
	}
	return nil
}
