package units

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// State is a unit's words as `systemctl is-active` and `systemctl is-enabled` print them:
// Active "active", "inactive" (also for a unit that does not exist), "failed", "activating", ...;
// Enabled "enabled", "disabled", "static", "alias", "masked", "not-found", ...
type State struct {
	Active  string
	Enabled string
}

// IsActive is `systemctl is-active --quiet`'s exit status 0.
func (s State) IsActive() bool {
	return slices.Contains([]string{"active", "reloading", "refreshing"}, s.Active)
}

// IsEnabled is `systemctl is-enabled --quiet`'s exit status 0: a unit that starts when its
// dependents or the boot do, not only one enabled by its own [Install] section.
func (s State) IsEnabled() bool {
	return slices.Contains([]string{"enabled", "enabled-runtime", "static", "alias", "indirect", "generated"}, s.Enabled)
}

// Read returns unit's state, from the host's shared read when a package shares the unit (Share).
func Read(ctx context.Context, ex transport.Executor, unit string) (State, error) {
	var snap snapshot
	var err error
	if sharedUnits, _ := sharedSet(); slices.Contains(sharedUnits, unit) {
		snap, err = readShared(ctx, ex)
	} else {
		snap, err = read(ctx, ex, []string{unit}, nil, nil)
	}
	if err != nil {
		return State{}, err
	}
	return snap.units[unit], nil
}

// snapshot is one read of units and files. A file read that failed fails only the callers
// that asked for a file.
type snapshot struct {
	units    map[string]State
	files    map[string]File
	filesErr error
	commands map[string]transport.Section
}

func read(ctx context.Context, ex transport.Executor, unitList, fileList []string, commands []sharedCommand) (snapshot, error) {
	for _, u := range unitList {
		if !transport.UnitNamePattern.MatchString(u) {
			return snapshot{}, fmt.Errorf("read the state of systemd units: unit name %q is not valid", u)
		}
	}
	sections, err := transport.ReadSections(ctx, ex, batchScript(unitList, fileList, commands), "read the state of systemd units and key files")
	if err != nil {
		return snapshot{}, err
	}
	var snap snapshot
	for _, c := range commands {
		if sec, ok := sections[commandSectionPrefix+c.section]; ok {
			if snap.commands == nil {
				snap.commands = map[string]transport.Section{}
			}
			snap.commands[c.section] = sec
		}
	}
	if len(fileList) > 0 {
		sec, ok := sections["files"]
		snap.files, snap.filesErr = parseFiles(fileList, sec, ok)
	}
	if len(unitList) == 0 {
		return snap, nil
	}
	states, ok, err := parseBatch(unitList, sections)
	if err != nil || ok {
		snap.units = states
		return snap, err
	}
	// An older systemd ends is-enabled at the first unit without a unit file, where a newer one
	// prints "not-found" in its place: then ask each unit alone, as before the batch.
	res, err := ex.Read(ctx, oneByOneScript(unitList))
	if err != nil {
		return snapshot{}, fmt.Errorf("read the state of systemd units: %w", err)
	}
	snap.units, err = parseOneByOne(unitList, res.Stdout)
	return snap, err
}

// batchScript hashes the files, then reads the units in three steps that spare systemd the
// work is-active would cost it: reading a unit that is not loaded (a disabled, stopped daemon,
// or one not installed) makes systemd load it from disk and drop it again, on every read.
//   - A service with no unit file anywhere on the manager's search path is listed as absent:
//     systemctl would call it inactive and not-found.
//   - list-units names every loaded unit with its active state; a unit it leaves out is not
//     loaded, so inactive. It lists units by their own names only, so a name whose unit file
//     is a symlink (an alias, or masked) and any name that is not a plain service are asked
//     with is-active, each alone.
//   - is-enabled answers for all but the absent ones, one line per unit in order, whatever its
//     exit status.
func batchScript(unitList, fileList []string, commands []sharedCommand) string {
	s := transport.NewScript().Text(transport.SectionFuncs)
	if len(fileList) > 0 {
		s.Text(hashFilesFunc).Command(append([]string{"sec", "files", "hashfiles"}, fileList...)...)
	}
	for _, c := range commands {
		s.Command(append([]string{"sec", commandSectionPrefix + c.section}, c.argv...)...)
	}
	if len(unitList) > 0 {
		s.Set("unit_dirs", unitDirs).Args(unitList...).Text(readUnits)
	}
	return s.String()
}

// readUnits is batchScript's reading of the units.
//
//go:embed read_units.sh
var readUnits string

// unitDirs is the system manager's unit search path, as `systemd-analyze unit-paths` prints it,
// with /lib/systemd/system for hosts whose /usr is not merged. A unit that is still loaded
// after its file was deleted reads as absent, as systemd reads it after the next daemon-reload.
const unitDirs = "/etc/systemd/system.control /run/systemd/system.control /run/systemd/transient " +
	"/run/systemd/generator.early /etc/systemd/system /etc/systemd/system.attached /run/systemd/system " +
	"/run/systemd/system.attached /run/systemd/generator /usr/local/lib/systemd/system /usr/lib/systemd/system " +
	"/lib/systemd/system /run/systemd/generator.late"

// parseBatch reads batchScript's answer; ok is false when is-enabled did not answer for every
// unit it was asked about.
func parseBatch(list []string, sections map[string]transport.Section) (map[string]State, bool, error) {
	states := make(map[string]State, len(list))
	for _, u := range sections["absent"].Lines {
		if !slices.Contains(list, u) {
			return nil, false, fmt.Errorf("read the state of systemd units: unit %q listed as absent was not asked about", u)
		}
		states[u] = State{Active: "inactive", Enabled: "not-found"}
	}
	var present []string
	for _, u := range list {
		if _, isAbsent := states[u]; !isAbsent {
			present = append(present, u)
		}
	}
	if len(present) == 0 {
		return states, true, nil
	}
	active, err := activeStates(sections)
	if err != nil {
		return nil, false, err
	}
	enabled := sections["enabled"].Lines
	if len(enabled) != len(present) {
		return nil, false, nil
	}
	for i, u := range present {
		a, ok := active[u]
		if !ok {
			a = "inactive" // not loaded
		}
		states[u] = State{Active: a, Enabled: strings.TrimSpace(enabled[i])}
	}
	return states, true, nil
}

// activeStates reads the active state of each unit from list-units' lines and is-active's.
func activeStates(sections map[string]transport.Section) (map[string]string, error) {
	loaded, ok := sections["loaded"]
	if !ok || loaded.Status != 0 {
		return nil, fmt.Errorf("read the state of systemd units: systemctl list-units failed (status %d): %q", loaded.Status, loaded.Lines)
	}
	active := map[string]string{}
	for _, line := range loaded.Lines {
		f := strings.Fields(line) // UNIT LOAD ACTIVE SUB DESCRIPTION...
		if len(f) < 4 {
			return nil, fmt.Errorf("read the state of systemd units: unexpected systemctl list-units line %q", line)
		}
		active[f[0]] = f[2]
	}
	for _, line := range sections["linked"].Lines {
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("read the state of systemd units: unexpected systemctl is-active line %q", line)
		}
		active[f[0]] = f[1]
	}
	return active, nil
}

// oneByOneScript asks about each unit alone; a unit is-enabled cannot tell about prints only a
// complaint on stderr.
func oneByOneScript(list []string) string {
	return transport.NewScript().Text(transport.SectionFuncs).Args(list...).
		Text(`i=0
for u; do sec "u$i" systemctl is-active "$u"; sec "e$i" systemctl is-enabled "$u" 2>/dev/null; i=$((i+1)); done`).String()
}

// parseOneByOne reads oneByOneScript's answer. A unit is-enabled has no word for reads as
// "not-found", which it is in the systemd that prints that word.
func parseOneByOne(list []string, out []byte) (map[string]State, error) {
	sections, err := transport.ParseSections(out)
	if err != nil {
		return nil, fmt.Errorf("read the state of systemd units: %w", err)
	}
	word := func(key, none string) string {
		if lines := sections[key].Lines; len(lines) > 0 {
			return strings.TrimSpace(lines[0])
		}
		return none
	}
	states := make(map[string]State, len(list))
	for i, u := range list {
		states[u] = State{Active: word(fmt.Sprintf("u%d", i), "unknown"), Enabled: word(fmt.Sprintf("e%d", i), "not-found")}
	}
	return states, nil
}
