package units

import (
	"fmt"
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
	mu    sync.RWMutex
	units []string
	files []string
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
