package units

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// shared is what the host's shared read covers: the units and key files that the packages
// owning them register with Share. Every caller on a host asks for the same set, so the read
// is one script text per host, which transport.Executor.Read runs once for all of them until
// the host changes; asking about all of them costs systemctl, sha256sum and stat hardly more
// than asking about one.
var shared struct {
	mu       sync.RWMutex
	units    []string
	files    []string
	commands []sharedCommand
}

// sharedCommand is a read-only command of the shared read whose output lands in a section of
// its own.
type sharedCommand struct {
	section string
	argv    []string
}

// sectionName keeps a shared command's section apart from the read's own sections.
var sectionName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

const commandSectionPrefix = "shared-"

// ShareCommand adds a read-only command to the host's shared read, its output and exit status
// reported in section (ReadShared); a later call for the same section replaces the command. Like
// Share it is for the owning package's init; a section name that is not lower-case words
// panics.
func ShareCommand(section string, argv ...string) {
	if !sectionName.MatchString(section) || len(argv) == 0 {
		panic(fmt.Sprintf("units.ShareCommand: section %q with command %q is not valid", section, argv))
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	cmds := slices.DeleteFunc(slices.Clone(shared.commands), func(c sharedCommand) bool { return c.section == section })
	shared.commands = append(cmds, sharedCommand{section: section, argv: slices.Clone(argv)})
}

// Share adds the package's units (systemd unit names) and key files (plain absolute paths,
// whose checksum, owner and mode the read reports) to the host's shared read. It is for the
// owning package's init, so that every read of a run asks for the same set; a name that is
// not valid is a mistake in the program, and panics.
func Share(unitNames, files []string) {
	for _, u := range unitNames {
		if !transport.UnitNamePattern.MatchString(u) {
			panic(fmt.Sprintf("units.Share: unit name %q is not valid", u))
		}
	}
	for _, f := range files {
		if !filePath.MatchString(f) {
			panic(fmt.Sprintf("units.Share: %q is not a plain absolute path", f))
		}
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.units = appendNew(shared.units, unitNames)
	shared.files = appendNew(shared.files, files)
}

// appendNew appends the names that list does not hold yet, into a new slice: callers of
// sharedSet keep theirs unchanged.
func appendNew(list, names []string) []string {
	out := slices.Clone(list)
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// SharedUnits are the units of the host's shared read, in the order the script asks them.
func SharedUnits() []string {
	u, _ := sharedSet()
	return slices.Clone(u)
}

// SharesFile tells whether the host's shared read reports path.
func SharesFile(path string) bool {
	_, f := sharedSet()
	return slices.Contains(f, path)
}

func sharedSet() (unitNames, files []string) {
	shared.mu.RLock()
	defer shared.mu.RUnlock()
	return shared.units, shared.files
}

func sharedCommands() []sharedCommand {
	shared.mu.RLock()
	defer shared.mu.RUnlock()
	return shared.commands
}

// ReadShared returns the section of the host's shared read that a command shared with
// ShareCommand answered in.
func ReadShared(ctx context.Context, ex transport.Executor, section string) (transport.Section, error) {
	snap, err := readShared(ctx, ex)
	if err != nil {
		return transport.Section{}, err
	}
	sec, ok := snap.commands[section]
	if !ok {
		return transport.Section{}, fmt.Errorf("the host's shared read has no answer for %s", section)
	}
	return sec, nil
}

// readShared is the host's shared read: the same script for every caller of a run.
func readShared(ctx context.Context, ex transport.Executor) (snapshot, error) {
	unitNames, files := sharedSet()
	return read(ctx, ex, unitNames, files, sharedCommands())
}
