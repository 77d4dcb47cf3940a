package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// MaxReleasesPerUpgrade is how many major releases Slurm upgrades across at once: slurmdbd
// and slurmctld read the state and the database of the two releases before their own.
const MaxReleasesPerUpgrade = 2

// PackageFamily are the binary packages built from Slurm's source that the provider installs
// or that these depend on: Debian's depend on each other's exact version, so a node's
// installed ones move together, in one apt transaction.
var PackageFamily = []string{"slurmdbd", "slurmctld", "slurmd", ClientPackage, "slurm-wlm-basic-plugins", "slurm-wlm-mysql-plugin", NVMLPluginPackage}

// basicPlugins is the package every daemon and the client depend on with the exact version,
// so a pinned install names it too: apt does not pick a dependency's older version by itself.
const basicPlugins = "slurm-wlm-basic-plugins"

// upgradeOrder is Slurm's order of the daemons in an upgrade: slurmdbd, then slurmctld, then
// slurmd, since each talks to the one before it at its own release or older.
var upgradeOrder = []string{"slurmdbd", "slurmctld", "slurmd"}

// knownReleases are Slurm's major releases up to the one where the release train became two
// a year, in May and November; their order is what counts, not their numbers.
var knownReleases = []string{"17.02", "17.11", "18.08", "19.05", "20.02", "20.11", "21.08", "22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11"}

// Release is the major release of a Debian version of Slurm's packages: "24.11" of
// "24.11.5-4+deb13u1".
func Release(debVersion string) (string, error) {
	parts := strings.SplitN(packages.Upstream(debVersion), ".", 3)
	if len(parts) < 2 {
		return "", fmt.Errorf("%q names no Slurm release (YY.MM)", debVersion)
	}
	release := parts[0] + "." + parts[1]
	if _, err := releaseIndex(release); err != nil {
		return "", fmt.Errorf("%q: %w", debVersion, err)
	}
	return release, nil
}

// releaseIndex numbers the releases in order; after the known ones, releases come in May and
// November of each year.
func releaseIndex(release string) (int, error) {
	if i := slices.Index(knownReleases, release); i >= 0 {
		return i, nil
	}
	yy, mm, _ := strings.Cut(release, ".")
	year, err := strconv.Atoi(yy)
	lastYear, _ := strconv.Atoi(strings.SplitN(knownReleases[len(knownReleases)-1], ".", 2)[0])
	i := len(knownReleases) - 1 + (year-lastYear)*2
	if mm == "05" {
		i--
	}
	if err != nil || (mm != "05" && mm != "11") || i < len(knownReleases) {
		return 0, fmt.Errorf("%s is not a Slurm major release (%s to %s, then YY.05 and YY.11)", release, knownReleases[0], knownReleases[len(knownReleases)-1])
	}
	return i, nil
}

// CheckUpgrade refuses what Slurm cannot do from the installed version to the wanted one: a
// downgrade (the daemons' state and the database, once converted, are not read by an older
// release), and a step of more than MaxReleasesPerUpgrade major releases, naming the
// release to go to first. from "" (nothing installed) allows any version.
func CheckUpgrade(from, to string) error {
	if from == "" || packages.CompareVersions(from, to) == 0 {
		return nil
	}
	if packages.CompareVersions(to, from) < 0 {
		return fmt.Errorf("%s is older than the installed %s: Slurm cannot be downgraded, as its state and accounting database, once converted, are not read by an older release", to, from)
	}
	fromRelease, err := Release(from)
	if err != nil {
		return err
	}
	toRelease, err := Release(to)
	if err != nil {
		return err
	}
	fi, _ := releaseIndex(fromRelease)
	ti, _ := releaseIndex(toRelease)
	if steps := ti - fi; steps > MaxReleasesPerUpgrade {
		return fmt.Errorf("%s (release %s) is %d major releases after the installed %s (release %s); Slurm upgrades across at most %d at once: upgrade to release %s first",
			to, toRelease, steps, from, fromRelease, MaxReleasesPerUpgrade, releaseAt(fi+MaxReleasesPerUpgrade))
	}
	return nil
}

// releaseAt is the release numbered i by releaseIndex.
func releaseAt(i int) string {
	if i < len(knownReleases) {
		return knownReleases[i]
	}
	lastYear, _ := strconv.Atoi(strings.SplitN(knownReleases[len(knownReleases)-1], ".", 2)[0])
	after := i - (len(knownReleases) - 1)
	year, month := lastYear+(after+1)/2, "05"
	if after%2 == 0 {
		month = "11"
	}
	return fmt.Sprintf("%d.%s", year, month)
}

// NodeUpgrade is the Slurm packages one node should have at one version.
type NodeUpgrade struct {
	// Version is the Debian version wanted.
	Version string
	// Packages are the ones the node's role needs, installed when missing.
	Packages []string
	// StateSaveLocation is backed up, with slurmctld stopped, before slurmctld's package
	// changes; "" on a node without slurmctld.
	StateSaveLocation string
	// Accounting is asked after slurmdbd's restart until it answers; nil when slurmdbd is
	// not set up on the node.
	Accounting *AccountingClient
	// Wait bounds each wait for a restarted daemon.
	Wait time.Duration
}

// UpgradeResult says what UpgradeNode did.
type UpgradeResult struct {
	// Installed are the packages installed or upgraded, sorted; empty when all were at
	// the version.
	Installed []string
	// Backup is the copy of StateSaveLocation, "" when none was taken.
	Backup string
	// DatabaseDump is the dump of the accounting database, "" when none was taken.
	DatabaseDump string
	// Restarted are the daemons restarted, in their order.
	Restarted []string
}

// UpgradeNode brings the node's Slurm packages to u.Version in Slurm's order: a dump of the
// accounting database when slurmdbd's package changes, and with slurmctld stopped, a copy of
// its state first; then every package of the node's family in one apt transaction, whose own
// restarts are held; then the daemons that ran before, each restarted and answering before
// the next: slurmdbd, slurmctld, slurmd. A node already at the version changes nothing.
func UpgradeNode(ctx context.Context, ex transport.Executor, u NodeUpgrade) (UpgradeResult, error) {
	var res UpgradeResult
	installed, err := packages.Installed(ctx, ex, PackageFamily...)
	if err != nil {
		return res, err
	}
	for _, p := range PackageFamily {
		if err := CheckUpgrade(installed[p], u.Version); err != nil {
			return res, fmt.Errorf("%s: %w", p, err)
		}
	}
	names := pinnedSet(u.Packages, installed)
	res.Installed = outdated(names, installed, u.Version)
	if len(res.Installed) == 0 {
		return res, nil
	}
	active, err := activeDaemons(ctx, ex)
	if err != nil {
		return res, err
	}
	changes := func(d string) bool { return installed[d] != "" && daemonChanges(d, res.Installed) }
	if changes("slurmdbd") {
		if res.DatabaseDump, err = DumpAccountingDatabase(ctx, ex); err != nil {
			return res, err
		}
	}
	if changes("slurmctld") && u.StateSaveLocation != "" {
		if res.Backup, err = stopAndBackUp(ctx, ex, u.StateSaveLocation, active["slurmctld"]); err != nil {
			return res, err
		}
	}
	if err := packages.InstallHeld(ctx, ex, u.Version, names...); err != nil {
		return res, err
	}
	for _, d := range upgradeOrder {
		if !active[d] || !changes(d) {
			continue
		}
		if err := restartUpgraded(ctx, ex, d, u); err != nil {
			return res, err
		}
		res.Restarted = append(res.Restarted, d)
	}
	return res, nil
}

// pinnedSet is what a pinned install names: the role's packages, the family members already
// installed, and the plugins they all depend on, sorted.
func pinnedSet(role []string, installed map[string]string) []string {
	names := append([]string{basicPlugins}, role...)
	for _, p := range PackageFamily {
		if installed[p] != "" {
			names = append(names, p)
		}
	}
	if slices.Contains(names, "slurmdbd") {
		names = append(names, "slurm-wlm-mysql-plugin")
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// outdated are the names not installed at version.
func outdated(names []string, installed map[string]string, version string) []string {
	var out []string
	for _, n := range names {
		if installed[n] == "" || packages.CompareVersions(installed[n], version) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// daemonChanges tells whether the install of changed replaces daemon d's own package or one
// it loads plugins from; a daemon whose files stay keeps running.
func daemonChanges(d string, changed []string) bool {
	for _, p := range changed {
		if p == d || p == basicPlugins || (d == "slurmdbd" && p == "slurm-wlm-mysql-plugin") {
			return true
		}
	}
	return false
}

//go:embed active_daemons.sh
var activeDaemonsText string

//go:embed restart_upgraded.sh
var restartUpgradedText string

// activeDaemons asks systemd which of Slurm's daemons run.
func activeDaemons(ctx context.Context, ex transport.Executor) (map[string]bool, error) {
	script := transport.NewScript().Args(upgradeOrder...).Text(activeDaemonsText).String()
	r, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return nil, fmt.Errorf("ask systemd which Slurm daemons run: %w", err)
	}
	active := map[string]bool{}
	for _, d := range strings.Fields(string(r.Stdout)) {
		active[d] = true
	}
	return active, nil
}

// stopAndBackUp stops a running slurmctld, so its state files are whole, and copies them.
func stopAndBackUp(ctx context.Context, ex transport.Executor, dir string, running bool) (string, error) {
	if running {
		if _, err := ex.Sudo(ctx, transport.ScriptEnv+"systemctl stop slurmctld\n", nil); err != nil {
			return "", fmt.Errorf("stop slurmctld before backing up its state: %w", err)
		}
		transport.Changed(ctx, ex, "stopped slurmctld for its upgrade")
	}
	return BackupStateSaveLocation(ctx, ex, dir)
}

// restartUpgraded restarts daemon d after its package changed and waits for it to answer
// where a client can ask it: slurmdbd through sacctmgr, slurmctld through scontrol ping.
func restartUpgraded(ctx context.Context, ex transport.Executor, d string, u NodeUpgrade) error {
	script := transport.NewScript().Set("d", d).Text(restartUpgradedText).String()
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("restart %s at %s: %w", d, u.Version, err)
	}
	transport.Changed(ctx, ex, "restarted "+d+" at "+u.Version)
	switch {
	case d == "slurmdbd" && u.Accounting != nil:
		return WaitSlurmdbd(ctx, ex, *u.Accounting, u.Wait)
	case d == "slurmctld":
		return waitController(ctx, ex, u.Wait)
	}
	return nil
}

// ErrControllerBehind means slurmctld runs an older version than the slurmd asked for: Slurm
// upgrades slurmd only after slurmctld.
var ErrControllerBehind = errors.New("slurmctld is older than the slurmd asked for")

// CheckControllerFirst asks the controller, through ex, for its slurmctld's version and
// refuses a slurmd version newer than it.
func CheckControllerFirst(ctx context.Context, ex transport.Executor, version string) error {
	ctl, err := packages.Installed(ctx, ex, "slurmctld")
	if err != nil {
		return err
	}
	if ctl["slurmctld"] == "" || packages.CompareVersions(ctl["slurmctld"], version) < 0 {
		return fmt.Errorf("%w: slurmctld is at %q, slurmd asked for %s", ErrControllerBehind, ctl["slurmctld"], version)
	}
	return nil
}

// InstalledFamilyVersion is the version of Slurm's packages already on the node, "" when none
// is: a package of the family added later must come at that version, or apt would upgrade
// the others with it, outside Slurm's order.
func InstalledFamilyVersion(ctx context.Context, ex transport.Executor) (string, error) {
	installed, err := packages.Installed(ctx, ex, PackageFamily...)
	if err != nil {
		return "", err
	}
	for _, p := range PackageFamily {
		if v := installed[p]; v != "" {
			return v, nil
		}
	}
	return "", nil
}
