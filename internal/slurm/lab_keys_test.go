package slurm

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// sentinelKey is no Slurm setting: the parser must refuse it, which proves
// that it read each file to its end (it is written last) and that its
// refusals are recognized.
const sentinelKey = "GpuclusterLabSentinel"

var unrecognizedKey = regexp.MustCompile(`unrecognized key: ([A-Za-z0-9_]+)`)

// The provider's table of Slurm settings (keys2411 and the version gates in
// keysChanged) agrees with the installed Slurm's own parser for every key it
// knows, in every scope: the provider refuses at plan exactly the keys the
// parser does not recognize, and names the version when it does. Run on
// each lab release (GPUCLUSTER_LAB_RELEASE), this checks the table against
// each Slurm generation rather than its release notes.
func TestLabSettingsTableMatchesParser(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 3*time.Minute)
	gpus := l.HostsWithRole(lab.RoleGPU)
	host := transporttest.LabHost{Lab: l, Host: gpus[len(gpus)-1].Name}
	installUnstarted(ctx, t, host, "slurmd", "slurm-client")
	v, err := ReadVersion(ctx, host, "slurmd")
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []Scope{ScopeSlurmConf, ScopeNode, ScopePartition, ScopeCgroup} {
		t.Run(string(scope), func(t *testing.T) {
			keys := knownKeys(scope)
			refused, err := parserRefusals(ctx, host, scope, keys)
			if err != nil {
				t.Fatal(err)
			}
			if !refused[strings.ToLower(sentinelKey)] {
				t.Fatalf("Slurm %s's parser did not refuse %s in %s: the check cannot see refusals", v.Original(), sentinelKey, scope)
			}
			var refusedNames []string
			for _, key := range keys {
				parser := refused[strings.ToLower(key)]
				if parser {
					refusedNames = append(refusedNames, key)
				}
				checkAgreement(t, v, scope, key, parser)
			}
			t.Logf("Slurm %s refuses %d of the %d %s settings the provider knows: %s", v.Original(), len(refusedNames), len(keys), scope, strings.Join(refusedNames, " "))
		})
	}
}

// checkAgreement fails when the provider's plan-time verdict on key differs
// from the parser's, or refuses without naming the version.
func checkAgreement(t *testing.T, v *version.Version, scope Scope, key string, parserRefuses bool) {
	t.Helper()
	_, err := CheckKeys(v, scope, []string{key})
	change, _ := findChange(scope, key)
	switch {
	case parserRefuses && err == nil:
		t.Errorf("Slurm %s's parser refuses %s setting %s, but the provider accepts it at plan: add it to keysChanged", v.Original(), scope, key)
	case !parserRefuses && err != nil && !change.parserReads:
		t.Errorf("Slurm %s's parser accepts %s setting %s, but the provider refuses it at plan: %v", v.Original(), scope, key, err)
	case err != nil && !strings.Contains(err.Error(), "the installed Slurm is "+v.Original()) && !strings.Contains(err.Error(), "unknown to Slurm "+v.Original()):
		t.Errorf("the refusal of %s setting %s does not name Slurm %s: %v", scope, key, v.Original(), err)
	}
}

// knownKeys are the settings of scope the provider has an opinion on.
func knownKeys(scope Scope) []string {
	keys := slices.Clone(keys2411[scope])
	for _, c := range keysChanged {
		if c.scope == scope && !slices.ContainsFunc(keys, func(k string) bool { return strings.EqualFold(k, c.key) }) {
			keys = append(keys, c.key)
		}
	}
	// Every test line starts with these, so the parser judges them on every line.
	return slices.DeleteFunc(keys, func(k string) bool { return k == "NodeName" || k == "PartitionName" })
}

// installUnstarted installs packages on host from the lab's repository
// without starting their daemons (Debian starts slurmd on install, and
// unconfigured it retries until systemd gives up after 90 s), and purges at
// cleanup what the install added, so the host is as bare as before.
func installUnstarted(ctx context.Context, t *testing.T, host transporttest.LabHost, pkgs ...string) {
	t.Helper()
	list := `dpkg-query -W -f='${db:Status-Status} ${Package}\n' | sed -n 's/^installed //p'`
	before, err := host.Sudo(ctx, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	// policy-rc.d is Debian's way to install without starting.
	_, installErr := host.Sudo(ctx, `printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends `+transport.Command(pkgs...)+`; rc=$?
rm -f /usr/sbin/policy-rc.d; exit $rc`, nil)
	after, err := host.Sudo(ctx, list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, pkg := range strings.Fields(string(after.Stdout)) {
		if !slices.Contains(strings.Fields(string(before.Stdout)), pkg) {
			added = append(added, pkg)
		}
	}
	if len(added) > 0 {
		t.Cleanup(func() {
			if _, err := host.Sudo(context.Background(), "DEBIAN_FRONTEND=noninteractive apt-get purge -y "+transport.Command(added...), nil); err != nil {
				t.Errorf("purge %s: %v", strings.Join(added, " "), err)
			}
		})
	}
	if installErr != nil {
		t.Fatalf("install %s: %v", strings.Join(pkgs, " "), installErr)
	}
}

// parserRefusals hands Slurm's parser, on host, one file that sets every key
// of scope (and the sentinel last) and returns the keys it reports as
// unrecognized. The parser goes on after an unrecognized key in slurm.conf
// and cgroup.conf, but gives up the rest of a NodeName or PartitionName line,
// so each of those keys gets a line of its own. slurm.conf is read by
// scontrol; cgroup.conf only by slurmd, which the unknown sentinel makes
// exit right after the parse, before it would bind a port or register.
func parserRefusals(ctx context.Context, host transport.Executor, scope Scope, keys []string) (map[string]bool, error) {
	base := "ClusterName=lab\nSlurmctldHost=localhost\n"
	var lines []string
	for i, key := range append(slices.Clone(keys), sentinelKey) {
		switch scope {
		case ScopeNode:
			lines = append(lines, fmt.Sprintf("NodeName=k%d %s=1", i, key))
		case ScopePartition:
			lines = append(lines, fmt.Sprintf("PartitionName=k%d %s=1", i, key))
		default:
			lines = append(lines, key+"=1")
		}
	}
	content := strings.Join(lines, "\n") + "\n"
	script := transport.ScriptEnv + `d=$(mktemp -d) || exit 1
trap 'rm -rf -- "$d"' EXIT
`
	if scope == ScopeCgroup {
		script += `cat > "$d/cgroup.conf" || exit 1
printf '%sSlurmdSpoolDir=%s/spool\nSlurmdPidFile=%s/slurmd.pid\n' ` + transport.Quote(base+"ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n") + ` "$d" "$d" > "$d/slurm.conf" || exit 1
SLURM_CONF="$d/slurm.conf" timeout 60 slurmd -D -N localhost 2>&1
exit 0
`
	} else {
		script += `{ printf '%s' ` + transport.Quote(base) + ` && cat; } > "$d/slurm.conf" || exit 1
SLURM_CONF="$d/slurm.conf" scontrol show hostnames localhost 2>&1
exit 0
`
	}
	res, err := host.Sudo(ctx, script, []byte(content))
	if err != nil {
		return nil, fmt.Errorf("%s through Slurm's parser: %w", scope, err)
	}
	refused := map[string]bool{}
	for _, m := range unrecognizedKey.FindAllStringSubmatch(string(res.Stdout), -1) {
		refused[strings.ToLower(m[1])] = true
	}
	return refused, nil
}
